import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { scene as tavern } from '../../scenes/tavern/index.js';
import { replayScene } from '../../src/record/index.js';

/**
 * Replay as a regression test: tavern.jsonl is the log of `troupe run tavern --seed 7` (thirty
 * ticks, the cellar refused). Replaying it runs the tavern again with the models' replies taken
 * from the log and the tools run for real, and compares every event with the log. A change that
 * makes the tavern behave differently fails here, naming the first event that differs.
 *
 * When the change is meant, write the log again and commit it with the change:
 *
 *   rm test/golden/tavern.jsonl
 *   npx tsx src/cli/main.ts run tavern --seed 7 --quiet --log test/golden/tavern.jsonl
 */

const golden = fileURLToPath(new URL('./tavern.jsonl', import.meta.url));
const elsewhere = mkdtempSync(join(tmpdir(), 'troupe-golden-'));
afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

describe('the golden tavern log', () => {
  it('replays identically: every event the log holds is made again, with the same data', async () => {
    const report = await replayScene(golden, { definition: tavern });
    expect(report.divergence, report.message).toBeUndefined();
    expect(report).toMatchObject({ identical: true, unfinished: false, result: { reason: 'ticks', tick: 30 } });
    expect(report.events).toBeGreaterThan(1_000);
  });

  it('depends on no path of the machine that wrote it: a copy elsewhere replays the same', async () => {
    expect(readFileSync(golden, 'utf8')).not.toMatch(/"\/(?:home|root|tmp|Users|work)\/|[A-Z]:\\\\/);
    const copy = join(elsewhere, 'tavern.jsonl');
    copyFileSync(golden, copy);
    const report = await replayScene(copy, { definition: tavern });
    expect(report.divergence, report.message).toBeUndefined();
    expect(report.identical).toBe(true);
  });

  it('is left as it was: a replay writes nothing beside the log', async () => {
    const before = readFileSync(golden, 'utf8');
    await replayScene(golden, { definition: tavern });
    expect(readFileSync(golden, 'utf8')).toBe(before);
  });
});
