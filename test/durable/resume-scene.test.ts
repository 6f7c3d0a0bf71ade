import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scene as tavern } from '../../scenes/tavern/index.js';
import type { Envelope, Scene } from '../../src/index.js';
import { readLog } from '../../src/record/index.js';
import { resumeScene } from '../../src/record/resume-scene.js';
import { createSessionLog } from '../../src/record/session-log.js';

const recipe = (ticks: number) => ({ scene: 'tavern', source: { kind: 'shipped' as const }, options: {}, seed: 7, ticks, definitionHash: 'test' });

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the tavern with a log for `crashAt` ticks, then abandons it as a crash would (no stop). */
async function crashedRun(path: string, crashAt: number, everyTicks: number): Promise<void> {
  const log = createSessionLog(path, { checkpoints: { everyTicks }, recipe: recipe(12) });
  const scene: Scene = await tavern.create({ seed: 7, options: {}, log });
  for (let tick = 0; tick < crashAt; tick++) await scene.step();
  log.flush();
  log.closeSync(); // the process dies: no scene.stopped
}

const shape = (events: readonly Envelope[]) =>
  events.filter((event) => !['log.opened', 'log.checkpoint', 'log.error'].includes(event.type)).map(({ type, agent, data }) => ({ type, agent, data }));

describe('resumeScene', () => {
  it.each([
    [5, 2],
    [5, 100],
    [1, 100],
  ])('continues the tavern killed after tick %i (checkpoints every %i ticks) to the same events as an uninterrupted run', async (crashAt, everyTicks) => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-'));
    const reference = join(dir, 'reference.jsonl');
    const whole = createSessionLog(reference, { recipe: recipe(12) });
    const uninterrupted = await tavern.create({ seed: 7, options: {}, log: whole });
    await uninterrupted.run({ ticks: 12 });
    await whole.close();

    const path = join(dir, 'crashed.jsonl');
    await crashedRun(path, crashAt, everyTicks);
    const resumed = await resumeScene(path, { definition: tavern });
    expect(resumed.result.reason).toBe('ticks');
    const ids = readLog(path).events.map((event) => event.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(shape(readLog(path).events)).toEqual(shape(readLog(reference).events));
  });
});
