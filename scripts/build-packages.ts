/**
 * Builds the packages partners install (ADR 0042) into each package's dist/: the TypeScript the
 * package's entries reach, compiled to JS and .d.ts with the repository's compiler settings and the
 * repository root as rootDir (so the relative imports between src/shipped/, src/contract/,
 * src/wire/ and generated/ hold unchanged in dist/), and the data files the package reads at run
 * time or exports, copied from generated/ and openapi/. dist/ is never committed (.gitignore);
 * each package's `prepack` runs this for itself, so `npm pack` ships a fresh build of the committed
 * sources.
 *
 * Usage: tsx scripts/build-packages.ts [contract|client|partner-kit|sdk|verify ...] (none: all)
 */
import { cp, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { repoRoot } from './lib/paths.js';

export interface PackageBuild {
  /** The workspace folder holding package.json, README.md and LICENSE. */
  dir: string;
  /** The modules the package exports (and its bin's), relative to the repository root. */
  entries: string[];
  /** Files and folders copied from the repository into dist/: [from, to under dist/]. */
  copies: Array<[string, string]>;
}

/**
 * The contract's bundled documents where src/contract/documents.ts finds them from a package's
 * dist/; the code reads the JSON form only (the YAML form is @minibridge/contract's to export).
 */
const documents: [string, string] = ['generated/openapi', 'generated/openapi'];
const codeReadsJsonOnly = (file: string) => !file.endsWith('.yaml');

export const PACKAGES: Record<string, PackageBuild> = {
  contract: {
    dir: 'src/shipped/contract',
    entries: ['src/shipped/contract/index.ts', 'generated/types/platform.ts', 'generated/types/hostapp.ts', 'generated/types/miniapp.ts'],
    copies: [['generated/openapi', 'openapi']],
  },
  client: { dir: 'src/shipped/clients', entries: ['src/shipped/clients/index.ts'], copies: [] },
  'partner-kit': { dir: 'src/shipped/partner-kit', entries: ['src/shipped/partner-kit/index.ts'], copies: [documents] },
  sdk: {
    dir: 'src/shipped/sdk',
    entries: ['src/shipped/sdk/index.ts'],
    copies: [
      ['generated/sdk/minibridge-sdk.js', 'browser/minibridge-sdk.js'],
      ['generated/sdk/minibridge-host.js', 'browser/minibridge-host.js'],
      ['generated/sdk/bridge.schema.json', 'bridge.schema.json'],
      ['openapi/bridge.vectors.json', 'bridge.vectors.json'],
      ['src/shipped/native/jvm/src/main', 'native/jvm/src/main'],
    ],
  },
  verify: {
    dir: 'src/shipped/conformance',
    entries: ['src/shipped/cli.ts', 'src/shipped/conformance/index.ts', 'src/shipped/bridge-conformance/verifyBridge.ts'],
    copies: [
      documents,
      ['generated/sdk/bridge-conformance.schema.json', 'generated/sdk/bridge-conformance.schema.json'],
      ['openapi/bridge.vectors.json', 'openapi/bridge.vectors.json'],
      ['generated/bridge-conformance', 'generated/bridge-conformance'],
    ],
  },
};

/** The repository's compiler settings, emitting JS and declarations for a package. */
function compilerOptions(outDir: string): ts.CompilerOptions {
  const config = ts.readConfigFile(path.join(repoRoot, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, repoRoot);
  return { ...options, noEmit: false, rootDir: repoRoot, outDir, declaration: true, sourceMap: false, declarationMap: false };
}

/**
 * The source files parsed for one package's build, kept for the next: the packages share the
 * standard library's declarations, Node's and much of src/contract, and parsing those again for
 * each package was most of a build's time. Every package compiles with the same settings but its
 * outDir, which does not change how a file parses; a file changed on disk between two builds is
 * parsed again.
 */
const parsed = new Map<string, { text: string; file: ts.SourceFile }>();

function cachingHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const parse = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    // How the file is parsed (its target, and ES module or CommonJS) is part of the key.
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    const text = host.readFile(fileName);
    const kept = parsed.get(key);
    if (kept && text !== undefined && kept.text === text) return kept.file;
    const file = parse(fileName, languageVersion, onError, shouldCreate);
    if (file && text !== undefined) parsed.set(key, { text, file });
    return file;
  };
  return host;
}

export async function buildPackage(name: string): Promise<void> {
  const build = PACKAGES[name];
  if (!build) throw new Error(`no package ${name}; one of ${Object.keys(PACKAGES).join(', ')}`);
  const dist = path.join(repoRoot, build.dir, 'dist');
  await rm(dist, { recursive: true, force: true });
  const options = compilerOptions(dist);
  const program = ts.createProgram(
    build.entries.map((entry) => path.join(repoRoot, entry)),
    options,
    cachingHost(options),
  );
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (file: string) => file, getCurrentDirectory: () => repoRoot, getNewLine: () => '\n' };
    throw new Error(`${name}: ${ts.formatDiagnostics(diagnostics, host)}`);
  }
  for (const copy of build.copies) {
    const [from, to] = copy;
    await cp(path.join(repoRoot, from), path.join(dist, to), { recursive: true, ...(copy === documents && { filter: codeReadsJsonOnly }) });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  for (const name of names.length > 0 ? names : Object.keys(PACKAGES)) {
    await buildPackage(name);
    console.log(`${PACKAGES[name]!.dir}/dist/: built`);
  }
}
