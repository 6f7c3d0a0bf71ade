import { Writable } from 'node:stream';
import { main, type CliOptions } from '../../src/cli/main.js';

/** The fixture scenes that load and run. */
export const SCENES = new URL('./fixtures/scenes/', import.meta.url);
/** Fixture scenes that fail in every way a scene can. */
export const BROKEN = new URL('./fixtures/broken/', import.meta.url);

/** An in-memory output stream, optionally claiming to be a terminal; `onWrite` sees each chunk. */
export function capture(options: { tty?: boolean; onWrite?: (chunk: string) => void } = {}) {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      options.onWrite?.(String(chunk));
      done();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (options.tty === true) {
    stream.isTTY = true;
    stream.columns = 100;
  }
  return { stream, text: () => text };
}

export type TroupeRun = { code: number; out: string; err: string };

/**
 * Runs `troupe` in-process on the fixture scenes, with no colour, a fixed clock and no real
 * signal handlers unless the test asks otherwise.
 */
export async function troupe(argv: string[], options: CliOptions & { outTty?: boolean; errTty?: boolean } = {}): Promise<TroupeRun> {
  const out = capture({ tty: options.outTty });
  const err = capture({ tty: options.errTty });
  const code = await main(argv, out.stream, err.stream, {
    scenesDir: SCENES,
    env: {},
    clock: () => 0,
    interrupts: () => () => undefined,
    exit: () => undefined,
    ...options,
  });
  return { code, out: out.text(), err: err.text() };
}

/** The JSON lines of a `--json` run, parsed. */
export function jsonLines(text: string): { v: number; id: string; type: string; at: number; data: Record<string, unknown> }[] {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { v: number; id: string; type: string; at: number; data: Record<string, unknown> });
}
