import { spawn } from 'node:child_process';
import os from 'node:os';

/** How one command of a side-by-side run ended. */
export interface Outcome {
  name: string;
  ok: boolean;
}

export interface HeldOptions {
  cwd: string;
  /** Added to the command's niceness before it loads anything, so every process it starts inherits it. */
  niceness?: number;
  /** Where the held output goes when the command ends (the terminal by default). */
  write?: (text: string) => void;
}

/**
 * Runs a command with its output held, and writes it whole, under one heading, when the command
 * ends: reports of commands running side by side never interleave line by line.
 */
export function runHeld(name: string, command: string, args: readonly string[], options: HeldOptions): Promise<Outcome> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    if (options.niceness !== undefined && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, Math.min(19, os.getPriority() + options.niceness));
      } catch {
        // A system that refuses it runs the command at the caller's priority: slower, still correct.
      }
    }
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    let ended = false;
    const end = (ok: boolean, note: string) => {
      if (ended) return;
      ended = true;
      write(`\n── ${name}: ${ok ? 'passed' : `FAILED${note}`} ──\n${Buffer.concat(output).toString('utf8')}`);
      resolve({ name, ok });
    };
    child.on('error', (error) => end(false, ` (${error.message})`));
    child.on('close', (code, signal) => end(code === 0, signal ? ` (${signal})` : ` (exit ${code})`));
  });
}

/** Runs a command that owns the terminal (its output is not held). */
export function runInherited(name: string, command: string, args: readonly string[], cwd: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit' });
    let ended = false;
    const end = (ok: boolean) => {
      if (ended) return;
      ended = true;
      resolve({ name, ok });
    };
    child.on('error', (error) => {
      console.error(`${name} could not start: ${error.message}`);
      end(false);
    });
    child.on('close', (code) => end(code === 0));
  });
}
