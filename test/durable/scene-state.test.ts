import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createScene, defineScene, defineTool, scriptedProvider, type Envelope, type Scene } from '../../src/index.js';
import { readLog } from '../../src/record/index.js';
import { openResume, resumeScene } from '../../src/record/resume-scene.js';
import { createSessionLog, type SessionLog } from '../../src/record/session-log.js';

/**
 * A scene's state as data: its snapshot through JSON mid-run, its checkpoints (and damaged ones),
 * and members with memory and budgets carried over a resume.
 */

const TICKS = 8;

/**
 * Two clerks on a model, each with memory and a budget, in a scene with a budget of its own. The
 * model's reply depends on what it is sent (the remembered messages included): a member whose
 * memory came back wrong after a restore answers differently, and the events tell.
 */
const counting = defineScene({
  description: 'two clerks who remember what they counted',
  ticks: TICKS,
  create: ({ seed, log }) => {
    const scene = createScene({ name: 'counting', seed, ...(log !== undefined && { log }), budget: { modelCalls: 1_000 }, world: { tally: {} } });
    const tally = defineTool({
      name: 'tally',
      description: 'Write down a count.',
      parameters: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] } as const,
      execute: ({ count }, { agent }) => (scene.world.set(`tally.${agent}`, count, { agent }), `noted ${count}`),
    });
    for (const name of ['ann', 'bob']) {
      scene.add({
        name,
        instructions: `You are ${name}, a clerk. Count what you remember.`,
        tools: [tally],
        memory: true,
        budget: { modelCalls: 100, toolCalls: 100 },
        triggers: [{ every: name === 'ann' ? 1 : 2 }],
        provider: scriptedProvider((request) => {
          const chars = request.messages.reduce((sum, message) => sum + message.content.length, 0);
          return `<ACTION><tally><count>${request.messages.length * 1000 + (chars % 1000)}</count></tally></ACTION>`;
        }),
      });
    }
    return scene;
  },
});

const recipe = { scene: 'counting', source: { kind: 'shipped' as const }, options: {}, seed: 5, ticks: TICKS, definitionHash: 'test' };

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The process dies: what is written stays, nothing more is. */
function crash(log: SessionLog): void {
  log.flush();
  log.closeSync();
}

const shape = (events: readonly Envelope[]) =>
  events.filter((event) => !event.type.startsWith('log.')).map(({ type, agent, data }) => ({ type, agent, data }));

/** What each member and the scene hold at the end: the remembered messages and the budgets' counts. */
function kept(scene: Scene) {
  const count = (usage: { modelCalls: number; toolCalls: number; tokens: number } | undefined) => usage && { modelCalls: usage.modelCalls, toolCalls: usage.toolCalls, tokens: usage.tokens };
  return {
    members: [...scene.agents.values()].map((member) => ({
      name: member.name,
      memory: member.agent.memory?.messages(),
      budget: count(member.budget?.usage()),
      turns: member.turns,
    })),
    scene: count(scene.budget?.usage()),
    world: scene.world.snapshot(),
  };
}

async function uninterrupted(seed = 5) {
  const scene = await counting.create({ seed, options: {} });
  const events: Envelope[] = [];
  scene.bus.on('*', (event) => void events.push(event));
  await scene.run({ ticks: TICKS });
  return { scene, events };
}

describe('scene snapshots', () => {
  it('round-trip through JSON at any tick and go on to the same events, memory and budgets', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: TICKS - 1 }), async (seed, at) => {
        const whole = await uninterrupted(seed);

        const first = await counting.create({ seed, options: {} });
        const before: Envelope[] = [];
        first.bus.on('*', (event) => void before.push(event));
        for (let tick = 0; tick < at; tick++) await first.step();
        const text = JSON.stringify(first.snapshot());
        await first.stop();

        const second = await counting.create({ seed, options: {} });
        second.restore(JSON.parse(text));
        const after: Envelope[] = [];
        second.bus.on('*', (event) => void after.push(event));
        await second.run({ ticks: TICKS - at });
        // The first scene's events up to the snapshot, then the restored one's: the whole run's.
        const upTo = whole.events.findIndex((event) => event.type === 'scene.tick' && (event.data as { tick: number }).tick === at + 1);
        expect(shape(before.slice(0, upTo))).toEqual(shape(whole.events.slice(0, upTo)));
        expect(shape(after.filter((event) => event.type !== 'scene.started'))).toEqual(shape(whole.events.slice(upTo)));
        expect(kept(second)).toEqual(kept(whole.scene));
      }),
      { numRuns: 12 },
    );
  }, 60_000);
});

describe('resuming a scene whose members have memory and budgets', () => {
  it.each([3, 100])('goes on with their memory and budget counts as an uninterrupted run has them (checkpoints every %i ticks)', async (everyTicks) => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-scene-state-'));
    const referenceLog = join(dir, 'reference.jsonl');
    const wholeLog = createSessionLog(referenceLog, { recipe });
    const whole = await counting.create({ seed: 5, options: {}, log: wholeLog });
    await whole.run({ ticks: TICKS });
    await wholeLog.close();
    const reference = kept(whole);
    expect(reference.members.every((member) => (member.memory?.length ?? 0) > 2 && (member.budget?.modelCalls ?? 0) > 1)).toBe(true);

    const path = join(dir, 'counting.jsonl');
    const log = createSessionLog(path, { checkpoints: { everyTicks }, recipe });
    const scene = await counting.create({ seed: 5, options: {}, log });
    for (let tick = 0; tick < 5; tick++) await scene.step();
    crash(log);

    const opened = await openResume(path, { definition: counting });
    expect(opened.fromTick).toBe(everyTicks === 3 ? 3 : 0);
    const resumed = await opened.run();
    expect(resumed.result.reason).toBe('ticks');
    expect(kept(opened.scene)).toEqual(reference);
    expect(shape(readLog(path).events)).toEqual(shape(readLog(referenceLog).events));
  });
});

describe('damaged checkpoints', () => {
  /** A run checkpointed at ticks 2 and 4, killed after tick 5, and the log of the same run uninterrupted. */
  async function crashedWithCheckpoints() {
    dir = mkdtempSync(join(tmpdir(), 'troupe-scene-state-'));
    const reference = join(dir, 'reference.jsonl');
    const whole = createSessionLog(reference, { recipe });
    await (await counting.create({ seed: 5, options: {}, log: whole })).run({ ticks: TICKS });
    await whole.close();
    const path = join(dir, 'crashed.jsonl');
    const log = createSessionLog(path, { checkpoints: { everyTicks: 2 }, recipe });
    const scene = await counting.create({ seed: 5, options: {}, log });
    for (let tick = 0; tick < 5; tick++) await scene.step();
    crash(log);
    const folder = `${path}.checkpoints`;
    expect(readdirSync(folder).sort()).toEqual(['000001.json', '000002.json']);
    return { path, reference, newest: join(folder, '000002.json') };
  }

  it.each([
    ['another version', (text: string) => text.replace('"version":1,', '"version":2,'), 'checkpoint version 2; this troupe reads version 1'],
    ['its snapshot changed after it was written', (text: string) => text.replace(/"tally":\{"ann":\d+/, '"tally":{"ann":7'), 'checksum mismatch: the snapshot was changed after it was written'],
  ])('skips the newest checkpoint (%s), says why, and resumes from the one before', async (_what, damage, reason) => {
    const { path, reference, newest } = await crashedWithCheckpoints();
    const text = readFileSync(newest, 'utf8');
    const damaged = damage(text);
    expect(damaged).not.toBe(text);
    writeFileSync(newest, damaged);

    const resumed = await resumeScene(path, { definition: counting });
    expect(resumed.skippedCheckpoints).toEqual([{ file: newest, reason }]);
    expect(resumed).toMatchObject({ checkpoint: 1, fromTick: 2 });
    expect(resumed.result.reason).toBe('ticks');
    expect(shape(readLog(path).events)).toEqual(shape(readLog(reference).events));
  });
});
