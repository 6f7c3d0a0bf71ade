import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type { Envelope } from '../../src/bus/index.js';
import type { SceneDefinition } from '../../src/index.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
export const COUNTERS = fileURLToPath(new URL('fixtures/counters-scene.ts', import.meta.url));
export const CHORUS = fileURLToPath(new URL('fixtures/chorus-scene.ts', import.meta.url));
export const CHATTER = fileURLToPath(new URL('fixtures/model-scene.ts', import.meta.url));

/** A `troupe` command running as a child process, its output collected. */
export type Troupe = {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
};

/** Starts `troupe <args>` from the sources, in a process of its own (`env` added to this process's). */
export function troupe(args: readonly string[], env: Record<string, string> = {}): Troupe {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => void (out += String(chunk)));
  child.stderr!.on('data', (chunk) => void (err += String(chunk)));
  const exited = once(child, 'close').then(([code, signal]) => (code ?? signal) as number | string);
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Every event of a stream, in order. */
export async function streamEvents(admin: Redis, stream: string): Promise<(Envelope & { worker?: string })[]> {
  const entries = await admin.xrange(stream, '-', '+');
  return entries.map(([, fields]) => {
    const event = JSON.parse(fields[fields.indexOf('event') + 1]!) as Envelope & { worker?: string };
    const at = fields.indexOf('worker');
    return at === -1 ? event : { ...event, worker: fields[at + 1]! };
  });
}

/** Each agent's `action.parsed` calls in the order it made them, as sorted lines: what two runs must share. */
export function askedCalls(events: readonly Envelope[]): string[] {
  const counts = new Map<string, number>();
  const lines: string[] = [];
  for (const event of events) {
    if (event.type !== 'action.parsed') continue;
    const agent = event.agent ?? '';
    const n = counts.get(agent) ?? 0;
    counts.set(agent, n + 1);
    const calls = (event as Envelope<'action.parsed'>).data.calls.map((call) => [call.name, call.args]);
    lines.push(`${agent} #${n} ${JSON.stringify(calls)}`);
  }
  return lines.sort();
}

/** Runs a scene definition in this process: its events, result and summary line. */
export async function runInProcess(definition: SceneDefinition, seed: number, options: Record<string, number | string | boolean>, ticks: number) {
  const events: Envelope[] = [];
  const scene = await definition.create({ seed, options, observe: (bus) => void bus.on('*', (event) => void events.push(event)) });
  const result = await scene.run({ ticks });
  return { events, scene, result, summary: definition.summarize?.(scene, result) };
}

/** Polls `check` (async) until it holds, or throws after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 30_000, everyMs = 25): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A file that holds a fixture's calls while it exists (`--hold-file`); `release` deletes it. */
export function holdFile(): { path: string; release(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-hold-'));
  const path = join(dir, 'hold');
  writeFileSync(path, '');
  return { path, release: () => rmSync(dir, { recursive: true, force: true }) };
}
