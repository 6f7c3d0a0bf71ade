import * as nodeFs from 'node:fs';
import { dirname } from 'node:path';

/**
 * The synchronous file operations the session log uses. Tests inject failures through
 * `SessionLogOptions.fs` (a write that throws `ENOSPC`, for one), since a read-only directory
 * does not stop root.
 */
export type LogFs = {
  openSync: typeof nodeFs.openSync;
  writeSync: (fd: number, buffer: Uint8Array, offset: number, length: number) => number;
  readSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: number) => number;
  fsyncSync: typeof nodeFs.fsyncSync;
  /** The log's own group commits: its appended data and the size that reaches it, not its times. */
  fdatasyncSync: typeof nodeFs.fdatasyncSync;
  fstatSync: (fd: number) => { size: number };
  closeSync: typeof nodeFs.closeSync;
  /** Non-recursive; `ensureDir` walks up. */
  mkdirSync: (path: string) => unknown;
  readFileSync: (path: string, encoding: 'utf8') => string;
  statSync: (path: string) => { mtimeMs: number };
  unlinkSync: typeof nodeFs.unlinkSync;
};

/** `node:fs` with some operations replaced. */
export function logFs(overrides: Partial<LogFs> = {}): LogFs {
  return {
    openSync: nodeFs.openSync,
    writeSync: (fd, buffer, offset, length) => nodeFs.writeSync(fd, buffer, offset, length),
    readSync: (fd, buffer, offset, length, position) => nodeFs.readSync(fd, buffer, offset, length, position),
    fsyncSync: nodeFs.fsyncSync,
    fdatasyncSync: nodeFs.fdatasyncSync,
    fstatSync: (fd) => nodeFs.fstatSync(fd),
    closeSync: nodeFs.closeSync,
    mkdirSync: (path) => nodeFs.mkdirSync(path, 0o755),
    readFileSync: (path, encoding) => nodeFs.readFileSync(path, encoding),
    statSync: (path) => nodeFs.statSync(path),
    unlinkSync: nodeFs.unlinkSync,
    ...overrides,
  };
}

/** `setImmediate` as it was when the module loaded: a test that fakes timers must not stop the log from writing. */
export const nextTurn = setImmediate;

/** Writes all of `text` and returns its size in bytes: one `writeSync` for a regular file, looping only on a short write. */
export function writeAll(fs: LogFs, fd: number, text: string | Uint8Array): number {
  const buffer = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  let offset = 0;
  while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
  return buffer.length;
}

/**
 * `mkdir -p`, one level at a time. Node's own `mkdirSync(path, { recursive: true })` never returns
 * for a path under /proc (it retries ENOENT forever), so the walk is ours and bounded.
 */
export function ensureDir(fs: LogFs, dir: string, depth = 0): void {
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || depth >= 64 || dirname(dir) === dir) throw error;
    ensureDir(fs, dirname(dir), depth + 1);
    fs.mkdirSync(dir);
  }
}
