import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTavern } from '../../scenes/tavern/index.js';
import { defineScene } from '../../src/index.js';
import { latestCheckpoint } from '../../src/record/checkpoints.js';
import { readLog } from '../../src/record/index.js';
import { resumeScene } from '../../src/record/resume-scene.js';
import { createSessionLog } from '../../src/record/session-log.js';

const recipe = { scene: 'tavern', source: { kind: 'shipped' as const }, options: {}, seed: 7, ticks: 12, definitionHash: 'test' };
const approving = defineScene({ description: 'the tavern, cellar approved', ticks: 12, create: (context) => buildTavern({ ...context, cellar: 'approve' }) });

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a resume reads the log from its newest checkpoint on', () => {
  it('never reads what comes before the checkpoint (after the header and the recipe): its cost does not grow with it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-tail-'));
    const path = join(dir, 'crashed.jsonl');
    const log = createSessionLog(path, { checkpoints: { everyTicks: 2 }, recipe });
    const scene = await approving.create({ seed: 7, options: {}, log });
    for (let tick = 0; tick < 5; tick++) await scene.step();
    log.flush();
    log.closeSync();
    const { checkpoint } = latestCheckpoint(path);
    expect(checkpoint?.tick).toBe(4);

    // Every byte between the recipe's line and the checkpoint's offset made unreadable (newlines
    // kept): a reader from the start would find no event there, and a broken checksum chain.
    const bytes = readFileSync(path);
    const afterRecipe = bytes.indexOf(0x0a, bytes.indexOf(0x0a) + 1) + 1;
    for (let index = afterRecipe; index < checkpoint!.position.offset; index++) if (bytes[index] !== 0x0a) bytes[index] = 0x78; // x
    writeFileSync(path, bytes);
    expect(readLog(path).quarantined.length).toBeGreaterThan(10);

    const resumed = await resumeScene(path, { definition: approving });
    expect(resumed.fromTick).toBe(4);
    expect(resumed.result.reason).toBe('ticks');
    expect(resumed.result.tick).toBe(12);
  });
});

describe('the default checkpoint policy', () => {
  it('does not wait after the first checkpoint by its (warm-up) time: the next comes 10,000 events later', () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-checkpoint-cap-'));
    const path = join(dir, 'log.jsonl');
    const log = createSessionLog(path, { fsync: 'never' });
    let id = 0;
    const events = (count: number) => {
      for (let index = 0; index < count; index++) log.record({ id: `e-${++id}`, type: 'scene.tick', at: id, data: { tick: id } });
    };
    const slow = () => {
      const until = performance.now() + 40;
      while (performance.now() < until);
      return { state: 'slow' };
    };
    events(10_000);
    log.checkpoint!(1, slow);
    events(10_000);
    log.checkpoint!(2, slow); // due at once: the first checkpoint's 40 ms do not hold it back
    events(10_000);
    log.checkpoint!(3, slow); // held back: 19 × the second's 40 ms have not passed
    log.closeSync();
    expect(readdirSync(`${path}.checkpoints`).sort()).toEqual(['000001.json', '000002.json']);
  });
});
