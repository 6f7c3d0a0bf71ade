import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTavern } from '../../scenes/tavern/index.js';
import { createScene, defineScene, defineTool, replayScene, resumeScene, type SceneContext } from '../../src/index.js';
import { createSessionLog } from '../../src/record/index.js';

const recipe = (scene: string, ticks: number) => ({ scene, source: { kind: 'shipped' as const }, options: {}, seed: 7, ticks, definitionHash: 'test' });
const tavern = defineScene({ description: 'the tavern, cellar approved', ticks: 12, create: (context) => buildTavern({ ...context, cellar: 'approve' }) });

/** Two clerks who stamp forms; what a stamp answers is up to the test (a tool that changed since the log). */
let stampAnswer = (count: number) => `stamped ${count}`;
const office = defineScene({
  description: 'two clerks stamping',
  ticks: 4,
  create: (context: SceneContext) => {
    const scene = createScene({ name: 'office', seed: context.seed, log: context.log, ...(context.observe !== undefined && { observe: context.observe }) });
    let stamps = 0;
    const stamp = defineTool({
      name: 'stamp',
      description: 'Stamp a form.',
      parameters: { type: 'object', properties: {}, required: [] },
      execute: () => stampAnswer(++stamps),
    });
    for (const name of ['ada', 'bo']) scene.add({ name, tools: [stamp], brain: () => '<ACTION><stamp></stamp></ACTION>', rounds: 1 });
    return scene;
  },
});

let dir = '';
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  stampAnswer = (count) => `stamped ${count}`;
});

async function recorded(definition: typeof office, name: string, ticks: number, crashAt?: number): Promise<string> {
  dir ||= mkdtempSync(join(tmpdir(), 'troupe-replay-'));
  const path = join(dir, `${name}.jsonl`);
  const log = createSessionLog(path, { recipe: recipe(name, ticks), checkpoints: { everyTicks: 3 } });
  const scene = await definition.create({ seed: 7, options: {}, log });
  if (crashAt === undefined) await scene.run({ ticks });
  else {
    for (let tick = 0; tick < crashAt; tick++) await scene.step();
    log.flush();
    log.closeSync();
  }
  await log.close();
  return path;
}

describe('replayScene', () => {
  it('makes again every event of a recorded run: identical', async () => {
    const report = await replayScene(await recorded(tavern, 'tavern', 12), { definition: tavern });
    expect(report.message).toMatch(/^replayed \d+ events of .*tavern\.jsonl: identical$/);
    expect(report).toMatchObject({ identical: true, unfinished: false, result: { reason: 'ticks', tick: 12 } });
    expect(report.divergence).toBeUndefined();
  });

  it('reads a log a crash cut and a resume finished as one run', async () => {
    const path = await recorded(tavern, 'tavern', 12, 5);
    await resumeScene(path, { definition: tavern });
    const report = await replayScene(path, { definition: tavern });
    expect(report.divergence).toBeUndefined();
    expect(report).toMatchObject({ identical: true, unfinished: false });
  });

  it('compares what a log cut by a crash holds, and says its writer died', async () => {
    const report = await replayScene(await recorded(tavern, 'tavern', 12, 4), { definition: tavern });
    expect(report).toMatchObject({ identical: true, unfinished: true });
    expect(report.message).toMatch(/identical \(the log ends without scene\.stopped: its writer died\)$/);
  });

  it('reports the first event a changed tool makes differently: number, line, type, field and a hint', async () => {
    const path = await recorded(office, 'office', 4);
    stampAnswer = (count) => `STAMPED ${count}`;
    const report = await replayScene(path, { definition: office });
    expect(report.identical).toBe(false);
    expect(report.divergence).toMatchObject({ expected: { type: 'tool.completed', agent: 'ada' }, actual: { type: 'tool.completed', agent: 'ada' }, field: 'data.output' });
    expect(report.divergence!.line).toBeGreaterThan(2);
    expect(report.message).toMatch(/the run left its log at event \d+ \(line \d+\): the log has tool\.completed of ada, the run made tool\.completed of ada \(they differ at data\.output\); the same event with other data at data\.output: a tool or brain gave another answer/);
    expect(report.result.reason).toBe('stopped'); // stopped where it left its log
  });

  it('refuses a log that records no scene, and one whose scene code changed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-replay-'));
    const bare = join(dir, 'bare.jsonl');
    await createSessionLog(bare).close();
    await expect(replayScene(bare, { definition: office })).rejects.toThrow(/cannot replay .*bare\.jsonl: it records no scene recipe/);
    const path = await recorded(office, 'office', 2);
    await expect(replayScene(path, { definition: office, definitionHash: 'f'.repeat(64) })).rejects.toThrow(/the code of scene "office" changed since the log was written \(definition hash test…, now ffffffffffff…\)/);
  });
});
