import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { errorMessage } from '../errors.js';
import type { LogPosition } from './log-reader.js';

/** The `format` of a checkpoint file. */
export const CHECKPOINT_FORMAT = 'troupe-checkpoint';

/**
 * The version of the checkpoint file. Readers refuse any other.
 *
 * Version history:
 * - 1: `{ format, version, number, tick, position, sha256, snapshot }`; `sha256` of the
 *   snapshot's JSON text; `position` where the log's events after the checkpoint start.
 */
export const CHECKPOINT_VERSION = 1;

/** Checkpoints kept beside a log: the newest, and the one before it in case the newest is damaged. */
const KEEP = 2;

/** A checkpoint read back and verified. */
export type Checkpoint = { number: number; tick: number; position: LogPosition; snapshot: unknown; file: string };

/** A checkpoint file that could not be used, and why: a resume falls back to the one before. */
export type RejectedCheckpoint = { file: string; reason: string };

/** The folder of a log's checkpoints: `<log>.checkpoints/`. */
export function checkpointDir(logPath: string): string {
  return `${logPath}.checkpoints`;
}

/**
 * Writes checkpoint `number` beside the log: to a temporary file, forced to disk, then renamed into
 * place, so a crash leaves the old checkpoint or the new one, never half of one. Older checkpoints
 * than the last `KEEP` are removed. Returns the file name and the snapshot's SHA-256.
 */
export function writeCheckpoint(logPath: string, number: number, tick: number, position: LogPosition, snapshot: unknown): { file: string; sha256: string } {
  const dir = checkpointDir(logPath);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const snapshotText = JSON.stringify(snapshot);
  const sha256 = createHash('sha256').update(snapshotText).digest('hex');
  const name = `${String(number).padStart(6, '0')}.json`;
  const text = `{"format":"${CHECKPOINT_FORMAT}","version":${CHECKPOINT_VERSION},"number":${number},"tick":${tick},"position":${JSON.stringify(position)},"sha256":"${sha256}","snapshot":${snapshotText}}\n`;
  const temporary = join(dir, `.${name}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, join(dir, name));
  syncDir(dir);
  for (const old of numbered(dir).slice(KEEP)) rmSync(join(dir, old.file), { force: true });
  return { file: `${basename(logPath)}.checkpoints/${name}`, sha256 };
}

/**
 * The newest checkpoint that reads and verifies (format, version, checksum), and the newer ones
 * that did not, each with its reason. `undefined` when there is none to use.
 */
export function latestCheckpoint(logPath: string): { checkpoint: Checkpoint | undefined; rejected: RejectedCheckpoint[] } {
  const dir = checkpointDir(logPath);
  const rejected: RejectedCheckpoint[] = [];
  for (const { file } of numbered(dir)) {
    const path = join(dir, file);
    try {
      return { checkpoint: { ...readCheckpoint(readFileSync(path, 'utf8')), file: path }, rejected };
    } catch (error) {
      rejected.push({ file: path, reason: errorMessage(error) });
    }
  }
  return { checkpoint: undefined, rejected };
}

function readCheckpoint(text: string): Omit<Checkpoint, 'file'> {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(text.endsWith('\n') ? 'not JSON' : 'cut off mid-write (no end of line)');
  }
  if (parsed.format !== CHECKPOINT_FORMAT) throw new Error(`not a checkpoint (format ${JSON.stringify(parsed.format)})`);
  if (parsed.version !== CHECKPOINT_VERSION) throw new Error(`checkpoint version ${JSON.stringify(parsed.version)}; this troupe reads version ${CHECKPOINT_VERSION}`);
  const sha256 = createHash('sha256').update(JSON.stringify(parsed.snapshot)).digest('hex');
  if (sha256 !== parsed.sha256) throw new Error('checksum mismatch: the snapshot was changed after it was written');
  const position = parsed.position as LogPosition | undefined;
  if (!Number.isSafeInteger(position?.offset) || !Number.isSafeInteger(position?.line) || !Number.isSafeInteger(position?.chain)) {
    throw new Error('no valid log position');
  }
  return { number: parsed.number as number, tick: parsed.tick as number, position: position!, snapshot: parsed.snapshot };
}

/** The number of the newest checkpoint file beside a log, 0 when there is none. */
export function latestCheckpointNumber(logPath: string): number {
  return numbered(checkpointDir(logPath))[0]?.number ?? 0;
}

/** The checkpoint files of a folder, newest first. */
function numbered(dir: string): { file: string; number: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => /^\d{6,}\.json$/.test(name))
    .map((file) => ({ file, number: Number.parseInt(file, 10) }))
    .sort((a, b) => b.number - a.number);
}

function syncDir(dir: string): void {
  // A rename is durable once its directory is: not every file system allows opening one, so best effort.
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // the file itself is on disk; only the rename might be lost, and then the older checkpoint serves
  }
}
