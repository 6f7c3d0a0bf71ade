import { decodePlain, encodePlain } from '../../agent/run/plain-value.js';
import type { AgentSnapshot } from '../../agent/run/agent-snapshot.js';
import type { MemberSnapshot, PendingTrigger, SceneMember } from '../../scene/scene-member.js';

type Stored = MemberSnapshot & { agent: AgentSnapshot };

/** A member between turns, with its agent, as JSON: what a partition's commit stores for the next owner. */
export function memberText(member: SceneMember): string {
  return JSON.stringify(encodePlain({ ...member.snapshot(), agent: member.runtime.snapshot() }));
}

/**
 * Takes up the state the partition's last owner committed, merged with what this process saw
 * since (its replica of the member forgot its wakes at the start of the tick, so what it holds
 * now are the wakes and events of the tick's catch-up, which the owner's snapshot cannot have).
 * What the member heard stays this process's: speech positions are per process.
 */
export function restoreMember(member: SceneMember, text: string): void {
  const saved = decodePlain(JSON.parse(text)) as Stored;
  const here = member.snapshot();
  const events = [...(saved.events ?? []), ...(here.events ?? [])];
  const pending = earlier(saved.pending, here.pending);
  const merged: MemberSnapshot = { ...saved, heardUpTo: here.heardUpTo };
  if (pending === undefined) delete merged.pending;
  else merged.pending = pending;
  if (events.length === 0) delete merged.events;
  else merged.events = events.slice(-20);
  member.restore(merged);
  void member.runtime.resume(saved.agent);
}

/** The trigger closest to the start of a reply chain, as `SceneMember.wake` keeps it. */
function earlier(a: PendingTrigger | undefined, b: PendingTrigger | undefined): PendingTrigger | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.depth < a.depth ? b : a;
}
