import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/append-loop.ts', import.meta.url));

/** A fresh temporary directory; remove it with `cleanup`. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-log-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts the append-loop fixture and resolves with the child and its first stdout line matching
 * `until` (plus every line seen so far).
 */
export function startWriter(path: string, mode: 'loop' | 'torn' | 'hold', until: RegExp): Promise<{ child: ChildProcess; lines: string[]; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, path, mode], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buffered = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code, signal) => reject(new Error(`writer exited early (${code ?? signal}): ${stderr}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let end: number;
      while ((end = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        lines.push(line);
        const match = until.exec(line);
        if (match) {
          child.removeAllListeners('exit');
          resolve({ child, lines, match });
        }
      }
    });
  });
}

/** SIGKILLs a child and waits until it is gone. */
export function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
