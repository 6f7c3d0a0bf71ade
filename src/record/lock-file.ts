import { LogError, errorMessage } from '../errors.js';
import type { LogFs } from './log-fs.js';

/** A held lock; `release()` removes the lock file if it is still ours. */
export type LockHandle = { readonly path: string; release: () => void };

/** A lock file younger than this with no pid in it is being written, not stale. */
const FRESH_LOCK_MS = 10_000;

/**
 * Takes the lock `<target>.lock`: created with O_EXCL and holding our pid. A lock held by a live
 * process (this one included) refuses with a `LogError` naming the pid; a lock whose pid is dead
 * (a SIGKILLed writer) is taken over.
 */
export function acquireLock(target: string, fs: LogFs): LockHandle {
  const path = `${target}.lock`;
  for (let tries = 0; ; tries++) {
    try {
      const fd = fs.openSync(path, 'wx', 0o644);
      try {
        const pid = Buffer.from(`${process.pid}\n`);
        fs.writeSync(fd, pid, 0, pid.length);
      } finally {
        fs.closeSync(fd);
      }
      return { path, release: () => release(path, fs) };
    } catch (error) {
      if (code(error) !== 'EEXIST') {
        throw new LogError('log_write_failed', `cannot create the lock file ${path}: ${errorMessage(error)}`, { cause: error });
      }
    }
    const holder = readHolder(path, fs);
    if (holder.alive || tries > 0) {
      const who = holder.pid === process.pid ? `this process (pid ${holder.pid})` : holder.pid === undefined ? 'a process that is starting' : `pid ${holder.pid}`;
      throw new LogError('log_write_failed', `session log ${target} is already open by ${who}; lock file ${path}`);
    }
    try {
      fs.unlinkSync(path); // stale: its writer is gone
    } catch (error) {
      if (code(error) !== 'ENOENT') throw new LogError('log_write_failed', `cannot remove the stale lock ${path}: ${errorMessage(error)}`, { cause: error });
    }
  }
}

function readHolder(path: string, fs: LogFs): { pid: number | undefined; alive: boolean } {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch {
    return { pid: undefined, alive: false }; // removed meanwhile: try again
  }
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0) {
    let age = Number.POSITIVE_INFINITY;
    try {
      age = Date.now() - fs.statSync(path).mtimeMs;
    } catch {
      // gone: treat as stale
    }
    return { pid: undefined, alive: age < FRESH_LOCK_MS };
  }
  return { pid, alive: isAlive(pid) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return code(error) === 'EPERM'; // exists, owned by someone else
  }
}

function release(path: string, fs: LogFs): void {
  try {
    if (Number.parseInt(fs.readFileSync(path, 'utf8').trim(), 10) === process.pid) fs.unlinkSync(path);
  } catch {
    // already gone
  }
}

function code(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

