import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTavern } from '../../scenes/tavern/index.js';
import { createScene, defineScene, TroupeError, type Envelope, type Scene } from '../../src/index.js';
import { readLog } from '../../src/record/index.js';
import { resumeScene } from '../../src/record/resume-scene.js';
import { createSessionLog, type SessionLog } from '../../src/record/session-log.js';

const recipe = (ticks: number) => ({ scene: 'tavern', source: { kind: 'shipped' as const }, options: {}, seed: 7, ticks, definitionHash: 'test' });

/** The tavern whose landlord approves every trip to the cellar, as the scene's own code. */
const approving = defineScene({ description: 'the tavern, cellar approved', ticks: 12, create: (context) => buildTavern({ ...context, cellar: 'approve' }) });
/** The tavern whose cellar requests wait for whoever runs it. */
const asking = defineScene({ description: 'the tavern, cellar asked', ticks: 20, create: (context) => buildTavern(context) });

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The process dies: what is written stays, nothing more is (no scene.stopped). */
function crash(log: SessionLog): void {
  log.flush();
  log.closeSync();
}

const shape = (events: readonly Envelope[]) =>
  events.filter((event) => !['log.opened', 'log.checkpoint', 'log.error'].includes(event.type)).map(({ type, agent, data }) => ({ type, agent, data }));

const repeatedIds = (events: readonly Envelope[]) => {
  const ids = events.map((event) => event.id);
  return ids.filter((id, index) => ids.indexOf(id) !== index);
};

describe('resumeScene', () => {
  it.each([
    [5, 2],
    [5, 100],
    [1, 100],
  ])('continues the tavern killed after tick %i (checkpoints every %i ticks) to the same events as an uninterrupted run', async (crashAt, everyTicks) => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-'));
    const reference = join(dir, 'reference.jsonl');
    const whole = createSessionLog(reference, { recipe: recipe(12) });
    const uninterrupted = await approving.create({ seed: 7, options: {}, log: whole });
    await uninterrupted.run({ ticks: 12 });
    await whole.close();

    const path = join(dir, 'crashed.jsonl');
    const log = createSessionLog(path, { checkpoints: { everyTicks }, recipe: recipe(12) });
    const scene: Scene = await approving.create({ seed: 7, options: {}, log });
    for (let tick = 0; tick < crashAt; tick++) await scene.step();
    crash(log);

    const resumed = await resumeScene(path, { definition: approving });
    expect(resumed.result.reason).toBe('ticks');
    const events = readLog(path).events;
    expect(repeatedIds(events)).toEqual([]);
    expect(shape(events)).toEqual(shape(readLog(reference).events));
    // One run, one resume, each named in the log.
    expect(events.filter((event) => event.type === 'log.opened').map((event) => (event.data as { kind: string }).kind)).toEqual(['run', 'resume']);
  });

  it('requests again the approvals that waited at the crash, bound to the same call and arguments', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-'));
    const path = join(dir, 'asking.jsonl');
    const log = createSessionLog(path, { recipe: recipe(20) });
    const scene = await asking.create({ seed: 7, options: {}, log });
    const waiting = new Promise<Envelope<'tool.approval.requested'>>((resolve) => scene.bus.once('tool.approval.requested', resolve));
    void scene.run({ ticks: 20 });
    const request = await waiting;
    await new Promise((resolve) => setTimeout(resolve, 10));
    crash(log); // the steward's turn waits for the landlord; nobody answered

    const requestedAgain: Envelope<'tool.approval.requested'>[] = [];
    let live = false;
    const resumed = await resumeScene(path, {
      definition: asking,
      onLive: (again) => {
        live = true;
        again.bus.on('tool.approval.requested', (event) => {
          requestedAgain.push(event);
          again.agents.get(event.agent!)!.agent.approve(event.data.callId, { argsHash: event.data.argsHash });
        });
      },
    });
    expect(live).toBe(true);
    expect(resumed.result.reason).toBe('ticks');
    expect(requestedAgain[0]).toMatchObject({ agent: 'steward', data: request.data });
    expect(requestedAgain[0]!.id).not.toBe(request.id);
    const events = readLog(path).events;
    expect(repeatedIds(events)).toEqual([]);
    const cellarCalls = events.filter((event) => event.type === 'tool.completed' && (event.data as { callId: string }).callId === request.data.callId);
    expect(cellarCalls).toHaveLength(1);
  });

  it('refuses a log of another scene, with no definition hash and no checkpoint, and leaves the log as it was', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-'));
    const path = join(dir, 'tavern.jsonl');
    const log = createSessionLog(path, { recipe: recipe(12) });
    const scene = await approving.create({ seed: 7, options: {}, log });
    await scene.step();
    crash(log);
    const before = readFileSync(path, 'utf8');
    const cellar = defineScene({
      description: 'another scene',
      ticks: 12,
      create: () => {
        const other = createScene({ name: 'cellar', seed: 7 });
        other.add({ name: 'cellarer', brain: () => null });
        return other;
      },
    });
    const refused = await resumeScene(path, { definition: cellar }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TroupeError);
    expect(refused).toMatchObject({ code: 'resume_refused' });
    expect((refused as Error).message).toBe(`cannot resume ${path}: it records scene "tavern", and the definition given builds scene "cellar"`);
    expect(readFileSync(path, 'utf8')).toBe(before);
    // The lock is free again: the right scene resumes.
    expect((await resumeScene(path, { definition: approving })).result.reason).toBe('ticks');
  });
});
