import type { Envelope } from '../../bus/events.js';
import { patternMatcher } from '../../bus/pattern-match.js';
import type { PendingTrigger, SceneMember } from '../../scene/scene-member.js';

/** Events of the scene's own life: every process's scene publishes its own, so none is carried over. */
const LIFECYCLE = new Set(['scene.started', 'scene.tick', 'scene.stopping', 'scene.stopped', 'agent.spawned']);

/** Whether an event of the coordinator is the scene's own life rather than something that wakes agents. */
export function isLifecycle(event: Envelope): boolean {
  return LIFECYCLE.has(event.type);
}

const matchers = new Map<string, (type: string) => boolean>();

/**
 * Which events can wake a member of `cast` at all: speech, and the types its members' triggers
 * subscribe to (decided once per type). `wakesAny` needs only those of a tick's events.
 */
export function wakingEvents(cast: readonly SceneMember[]): (event: Envelope) => boolean {
  const patterns = new Set(cast.flatMap((member) => member.triggers.on.map((spec) => spec.on)));
  const matches = patterns.size === 0 ? () => false : patternMatcher([...patterns]);
  const byType = new Map<string, boolean>();
  return (event) => {
    if (event.type === 'agent.said') return true;
    let wakes = byType.get(event.type);
    if (wakes === undefined) byType.set(event.type, (wakes = matches(event.type)));
    return wakes;
  };
}

/**
 * Wakes `members` (a partition just taken up from its last commit) as the scene would have on
 * `events` (the tick's events its last owner did not see before it committed), without adding
 * anything to the speech log: those events were heard here already. The same rules as the
 * scene's ears: speech wakes speech listeners and the addressee, other events the members
 * subscribed to them; an agent is not woken by its own events. An event from another process
 * starts a reply chain one step deep, as an event from an agent between its turns does.
 */
export function rewake(members: readonly SceneMember[], events: readonly Envelope[], cast: ReadonlyMap<string, SceneMember>): void {
  visitWakes(members, events, cast, (member, trigger, event) => {
    if (event !== undefined) member.see(event);
    member.wake(trigger);
    return true;
  });
}

/**
 * Whether `events` would wake any of `members`: a partition that looks quiet is not, when what
 * its agents did this tick wakes an agent elsewhere (that agent hears it only at the next tick).
 */
export function wakesAny(members: readonly SceneMember[], events: readonly Envelope[], cast: ReadonlyMap<string, SceneMember>): boolean {
  let woken = false;
  visitWakes(members, events, cast, () => {
    woken = true;
    return false;
  });
  return woken;
}

/** Calls `wake` for each member an event wakes (with the event when it is one it subscribed to); stops when `wake` returns false. */
function visitWakes(
  members: readonly SceneMember[],
  events: readonly Envelope[],
  cast: ReadonlyMap<string, SceneMember>,
  wake: (member: SceneMember, trigger: PendingTrigger, event?: Envelope) => boolean,
): void {
  for (const event of events) {
    if (isLifecycle(event)) continue;
    const depth = event.agent !== undefined && cast.has(event.agent) ? 1 : 0;
    const from = event.agent ?? 'someone';
    if (event.type === 'agent.said') {
      const to = (event as Envelope<'agent.said'>).data.to;
      for (const member of members) {
        if (member.retired || member.name === from) continue;
        if (member.triggers.speech && !wake(member, { reason: 'message', detail: `${from} spoke`, cause: event.id, depth })) return;
        if (to === member.name && member.triggers.addressed && !wake(member, { reason: 'message', detail: `${from} spoke to you`, cause: event.id, depth })) return;
      }
    }
    for (const member of members) {
      if (member.retired || member.name === event.agent) continue;
      for (const spec of member.triggers.on) {
        let matcher = matchers.get(spec.on);
        if (matcher === undefined) matchers.set(spec.on, (matcher = patternMatcher([spec.on])));
        if (!matcher(event.type)) continue;
        let matches: boolean;
        try {
          matches = spec.where === undefined || spec.where(event) === true;
        } catch {
          // A predicate that throws wakes nobody, as in the scene.
          matches = false;
        }
        if (!matches) continue;
        if (!wake(member, { reason: 'event', detail: event.type, cause: event.id, depth }, event)) return;
        break;
      }
    }
  }
}
