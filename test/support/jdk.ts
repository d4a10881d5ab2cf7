import { execFile, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../scripts/lib/paths.js';

const run = promisify(execFile);

/** The JVM reference core (src/shipped/native/jvm, ADR 0040): its sources and its tests' sources. */
export const jvmRoot = path.join(repoRoot, 'src', 'shipped', 'native', 'jvm');
export const JAVA_RELEASE = 17;
const COMPILE_MS = 180_000;

/**
 * Flags for the tests' short-lived JVMs (javac, java, javap each run for a second or two): the
 * client compiler only and the serial collector. The default tiered compilation and parallel
 * collector start threads that cost more CPU than such a run saves: on two cores, a compile of
 * the core took 2.3 CPU-s with the defaults and 1.2 with these.
 */
export const SHORT_JVM = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];
/** The same flags as javac and javap take them, for the JVM they run in. */
export const SHORT_JVM_TOOL = SHORT_JVM.map((flag) => `-J${flag}`);

/** Every .java file under a folder, sorted (so the compile is the same on every machine). */
export function javaFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.java'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/**
 * Fails with a message saying what to install when this machine has no JDK 17 or later: the core's
 * tests are part of `npm test` and must not pass by being skipped.
 */
export function requireJdk(): void {
  const javac = spawnSync('javac', ['-version'], { encoding: 'utf8' });
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const install = 'the JVM core tests need a JDK 17 or later: on Debian, apt-get install -y openjdk-17-jdk-headless (.ci/run does it)';
  if (javac.error || java.error) throw new Error(`javac or java not found (${(javac.error ?? java.error)!.message}): ${install}`);
  const version = /javac (\d+)/.exec(`${javac.stdout}${javac.stderr}`);
  if (!version || Number(version[1]) < JAVA_RELEASE) throw new Error(`javac says "${`${javac.stdout}${javac.stderr}`.trim()}": ${install}`);
}

/** Compiles the given sources (warnings are errors) into out; the classpath may add folders. */
export async function compileJava(files: string[], out: string, classpath: string[] = []): Promise<{ stdout: string; stderr: string }> {
  const args = [...SHORT_JVM_TOOL, '--release', String(JAVA_RELEASE), '-Xlint:all', '-Werror', '-encoding', 'UTF-8', '-d', out];
  if (classpath.length > 0) args.push('-cp', classpath.join(path.delimiter));
  return run('javac', [...args, ...files], { timeout: COMPILE_MS, maxBuffer: 16 * 1024 * 1024 });
}
