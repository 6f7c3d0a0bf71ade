import type { Logger } from 'pino';
import type { Envelope } from '../bus/events.js';
import type { SceneMember } from './scene-member.js';
import type { SpeechLog } from './speech-log.js';
import type { SchedulePolicy } from './types.js';

/** What waking agents needs to know of the scene at that moment. */
export type Scheduling = {
  members: ReadonlyMap<string, SceneMember>;
  speechListeners: readonly SceneMember[];
  speech: SpeechLog;
  tick: number;
  maxReplyChain: number;
  logger: Logger;
};

/**
 * How far down a chain of replies an event is. Something an agent does in a turn that was itself
 * a reply is one step further; anything from outside the cast starts a chain afresh. Agents stop
 * waking each other once a chain passes `maxReplyChain`: that is the turn-taking that keeps two
 * agents from triggering each other forever, while the scene and its timers go on.
 */
function depthOf(event: Envelope, members: ReadonlyMap<string, SceneMember>): number {
  const source = event.agent === undefined ? undefined : members.get(event.agent);
  if (source === undefined) return 0;
  return source.busy && source.trigger !== undefined ? source.trigger.depth + 1 : 1;
}

/** Records speech in the scene's log and wakes the listeners it concerns. */
export function wakeOnSpeech(event: Envelope<'agent.said'>, scheduling: Scheduling): void {
  const { members, speech, tick } = scheduling;
  const from = event.agent ?? 'someone';
  const { text, to } = event.data;
  speech.add(to === undefined ? { from, text, tick } : { from, text, to, tick });
  const depth = depthOf(event, members);
  if (depth > scheduling.maxReplyChain) {
    scheduling.logger.debug({ from, depth }, 'speech heard but wakes nobody: the reply chain is long enough');
    return;
  }
  for (const listener of scheduling.speechListeners) {
    if (listener.name !== from && !listener.retired) listener.wake({ reason: 'message', detail: `${from} spoke`, cause: event.id, depth });
  }
  if (to === undefined) return;
  const addressee = members.get(to);
  if (addressee !== undefined && addressee.name !== from && addressee.triggers.addressed && !addressee.retired) {
    addressee.wake({ reason: 'message', detail: `${from} spoke to you`, cause: event.id, depth });
  }
}

/** Wakes the members subscribed to `pattern` with an event they did not cause themselves. */
export function wakeOnEvent(event: Envelope, listeners: readonly SceneMember[], scheduling: Scheduling, pattern: string): void {
  const depth = depthOf(event, scheduling.members);
  if (depth > scheduling.maxReplyChain) return;
  for (const member of listeners) {
    if (member.name === event.agent || member.retired) continue;
    for (const spec of member.triggers.on) {
      if (spec.on !== pattern) continue;
      let matches = true;
      try {
        matches = spec.where === undefined || spec.where(event) === true;
      } catch (error) {
        // A predicate that throws wakes nobody; the scene goes on.
        scheduling.logger.warn({ agent: member.name, pattern, err: error }, 'trigger predicate threw');
        matches = false;
      }
      if (!matches) continue;
      member.see(event);
      member.wake({ reason: 'event', detail: event.type, cause: event.id, depth });
      break;
    }
  }
}

/** Wakes members whose timers fall on `tick`. */
export function wakeOnTimers(order: readonly SceneMember[], tick: number): void {
  for (const member of order) {
    if (member.triggers.timers.length === 0 || member.retired) continue;
    for (const { every, offset } of member.triggers.timers) {
      if (tick >= offset && (tick - offset) % every === 0) {
        member.wake({ reason: 'timer', detail: `every ${every} ticks`, depth: 0 });
        break;
      }
    }
  }
}

/** The members that take a turn this tick, in cast order, under `policy`. */
export function dueMembers(
  policy: SchedulePolicy,
  order: readonly SceneMember[],
  tick: number,
  rotation: number,
): { due: SceneMember[]; rotation: number } {
  const free = (member: SceneMember): boolean => !member.retired && !member.busy && tick - member.lastThinkTick >= member.thinkEvery;
  if (policy === 'round-robin') {
    for (let offset = 0; offset < order.length; offset++) {
      const index = (rotation + offset) % order.length;
      const member = order[index]!;
      if (!free(member)) continue;
      member.pending = { reason: 'turn', depth: 0, ...(member.pending?.cause !== undefined && { cause: member.pending.cause }) };
      return { due: [member], rotation: index + 1 };
    }
    return { due: [], rotation };
  }
  const due: SceneMember[] = [];
  for (const member of order) {
    if (free(member) && (policy === 'every-tick' || member.pending !== undefined)) due.push(member);
  }
  return { due, rotation };
}

/** Whether nothing more can happen without outside help: nobody due, busy, or on a timer. */
export function isQuiet(policy: SchedulePolicy, order: readonly SceneMember[]): boolean {
  for (const member of order) {
    if (member.retired) continue;
    if (member.busy || policy !== 'trigger' || member.pending !== undefined || member.triggers.timers.length > 0) return false;
  }
  return true;
}
