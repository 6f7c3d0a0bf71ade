import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTavern } from '../../scenes/tavern/index.js';
import { defineScene, type Envelope } from '../../src/index.js';
import { foldEvents } from '../../src/inspect/state-snapshot.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { resumeScene } from '../../src/record/resume-scene.js';
import { inspect, openEvents, pageHeaders, send, troupeFrames } from './helpers.js';

/**
 * Logs whose writer died (no `scene.stopped` at the end) and logs with resumes in them, as the
 * inspector serves them: an interrupted run is not a running one, and a resumed run is one
 * timeline with each resume marked.
 */

const tavern = defineScene({ description: 'the tavern, cellar approved', ticks: 12, create: (context) => buildTavern({ ...context, cellar: 'approve' }) });
const recipe = { scene: 'tavern', source: { kind: 'shipped' as const }, options: {}, seed: 7, ticks: 12, definitionHash: 'test' };

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The tavern's log, checkpointed every 2 ticks, left after tick 5 — stopped from outside as
 * Ctrl-C stops it (`scene.stopped`, detail `interrupted`), or by a crash (nothing more written) —
 * then resumed to its end.
 */
async function resumedLog(how: 'stopped' | 'crashed'): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'troupe-inspect-resumed-'));
  const path = join(dir, `${how}.jsonl`);
  const log = createSessionLog(path, { checkpoints: { everyTicks: 2 }, recipe });
  const scene = await tavern.create({ seed: 7, options: {}, log });
  for (let tick = 0; tick < 5; tick++) await scene.step();
  if (how === 'stopped') {
    await scene.stop('interrupted');
    await log.close();
  } else {
    log.flush();
    log.closeSync();
  }
  await resumeScene(path, { definition: tavern });
  return path;
}

/**
 * Cuts a log as a SIGKILL would: the lines of its first `keep` events stay, and half of the next
 * line is left without its end of line.
 */
function cutAfter(path: string, keep: number): string {
  const lines = readFileSync(path, 'utf8').split('\n');
  const cut = join(dir, 'cut.jsonl');
  // The header, then one line per event (these logs have no quarantined lines).
  writeFileSync(cut, `${lines.slice(0, 1 + keep).join('\n')}\n`);
  const next = lines[1 + keep]!;
  appendFileSync(cut, next.slice(0, Math.floor(next.length / 2)));
  return cut;
}

async function stateOf(events: readonly Envelope[]) {
  const inspector = await inspect({ events });
  const reply = await send(inspector.port, { path: '/state', headers: pageHeaders(inspector.port) });
  return { inspector, state: JSON.parse(reply.text) as Record<string, unknown> };
}

const repeated = (ids: readonly (string | undefined)[]) => ids.filter((id, index) => ids.indexOf(id) !== index);

describe('a log whose writer died', () => {
  it('is interrupted, not running and not stopped, when its tail is cut off', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-inspect-cut-'));
    const path = join(dir, 'whole.jsonl');
    const log = createSessionLog(path, { recipe });
    const scene = await tavern.create({ seed: 7, options: {}, log });
    await scene.run({ ticks: 6 });
    await log.close();
    const whole = readLog(path).events;
    expect((await stateOf(whole)).state).toMatchObject({ started: true, stopped: true, ended: 'closed', events: whole.length, resumes: [] });

    // Killed during tick 4: everything before is on disk, its last line torn.
    const killedAt = whole.findIndex((event) => event.type === 'scene.tick' && (event.data as { tick: number }).tick === 4) + 3;
    const { events, quarantined } = readLog(cutAfter(path, killedAt));
    expect(quarantined).toHaveLength(1);
    expect(events).toHaveLength(killedAt);
    const { state } = await stateOf(events);
    expect(state).toMatchObject({ mode: 'log', scene: 'tavern', started: true, stopped: false, ended: 'interrupted', events: killedAt, tick: 4, resumes: [] });
  });

  it('without a scene, is interrupted when an agent run started and did not finish', () => {
    const event = (id: string, type: string, data: unknown = {}) => ({ id, type, at: 0, agent: 'till', data }) as unknown as Envelope;
    const opened = { id: 'log-r1', type: 'log.opened', at: 0, data: { run: 'r1', kind: 'run' } } as Envelope;
    const run = [opened, event('t-1', 'run.started', { input: 'Charge Ana.', number: 1 }), event('t-2', 'agent.said', { text: 'Charging.' })];
    expect(foldEvents(run)).toMatchObject({ started: false, stopped: false, ended: 'interrupted' });
    expect(foldEvents([...run, event('t-3', 'agent.finished', { reason: 'final_answer' })]).ended).toBe('closed');
  });
});

describe('a log with resumes in it', () => {
  it('is one timeline with no id repeated, each resume marked where the run had got to', async () => {
    const path = await resumedLog('crashed');
    const { events } = readLog(path);
    const { inspector, state } = await stateOf(events);
    const resume = events.find((event) => event.type === 'log.opened' && (event.data as { kind: string }).kind === 'resume')!;
    expect(state).toMatchObject({ started: true, stopped: true, ended: 'closed', tick: 12 });
    // Taken up after tick 5, replayed from the checkpoint of tick 4.
    expect(state.resumes).toEqual([{ id: resume.id, run: (resume.data as { run: string }).run, tick: 5, fromTick: 4, checkpoint: 2 }]);
    const stream = await openEvents(inspector.port);
    await stream.until((frames) => troupeFrames(frames).length === events.length);
    const ids = troupeFrames(stream.frames).map((frame) => frame.id);
    expect(ids).toEqual(events.map((event) => event.id));
    expect(repeated(ids)).toEqual([]);
    // One scene: started once, stopped once, its ticks in order across the resume.
    expect(events.filter((event) => event.type === 'scene.started')).toHaveLength(1);
    const ticks = events.filter((event) => event.type === 'scene.tick').map((event) => (event.data as { tick: number }).tick);
    expect(ticks).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
    stream.close();
  });

  it('is not stopped by the scene.stopped of a segment stopped from outside and then resumed; cut off in the resume, it is interrupted', async () => {
    const path = await resumedLog('stopped');
    const { events } = readLog(path);
    const stops = events.filter((event): event is Envelope<'scene.stopped'> => event.type === 'scene.stopped');
    expect(stops.map((event) => [event.data.reason, event.data.detail])).toEqual([
      ['stopped', 'interrupted'],
      ['ticks', undefined],
    ]);
    expect((await stateOf(events)).state).toMatchObject({ stopped: true, ended: 'closed', resumes: [{ tick: 5, fromTick: 4, checkpoint: 2 }] });

    // The resume's writer is killed after tick 8: the first segment's stop no longer holds.
    const killedAt = events.findIndex((event) => event.type === 'scene.tick' && (event.data as { tick: number }).tick === 8) + 1;
    const cut = readLog(cutAfter(path, killedAt)).events;
    expect(cut.some((event) => event.type === 'scene.stopped')).toBe(true);
    const { state } = await stateOf(cut);
    expect(state).toMatchObject({ started: true, stopped: false, ended: 'interrupted', tick: 8, resumes: [{ tick: 5 }] });
    expect(repeated(cut.map((event) => event.id))).toEqual([]);
  });
});
