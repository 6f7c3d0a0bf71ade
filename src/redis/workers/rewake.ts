import type { Envelope } from '../../bus/events.js';
import { patternMatcher } from '../../bus/pattern-match.js';
import type { SceneMember } from '../../scene/scene-member.js';

/** Events of the scene's own life: every process's scene publishes its own, so none is carried over. */
const LIFECYCLE = new Set(['scene.started', 'scene.tick', 'scene.stopping', 'scene.stopped', 'agent.spawned']);

/** Whether an event of the coordinator is the scene's own life rather than something that wakes agents. */
export function isLifecycle(event: Envelope): boolean {
  return LIFECYCLE.has(event.type);
}

const matchers = new Map<string, (type: string) => boolean>();

/**
 * Wakes `members` (a partition just taken up from its last commit) as the scene would have on
 * `events` (the tick's events its last owner did not see before it committed), without adding
 * anything to the speech log: those events were heard here already. The same rules as the
 * scene's ears: speech wakes speech listeners and the addressee, other events the members
 * subscribed to them; an agent is not woken by its own events. An event from another process
 * starts a reply chain one step deep, as an event from an agent between its turns does.
 */
export function rewake(members: readonly SceneMember[], events: readonly Envelope[], cast: ReadonlyMap<string, SceneMember>): void {
  for (const event of events) {
    if (isLifecycle(event)) continue;
    const depth = event.agent !== undefined && cast.has(event.agent) ? 1 : 0;
    const from = event.agent ?? 'someone';
    if (event.type === 'agent.said') {
      const to = (event as Envelope<'agent.said'>).data.to;
      for (const member of members) {
        if (member.retired || member.name === from) continue;
        if (member.triggers.speech) member.wake({ reason: 'message', detail: `${from} spoke`, cause: event.id, depth });
        if (to === member.name && member.triggers.addressed) member.wake({ reason: 'message', detail: `${from} spoke to you`, cause: event.id, depth });
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
        member.see(event);
        member.wake({ reason: 'event', detail: event.type, cause: event.id, depth });
        break;
      }
    }
  }
}
