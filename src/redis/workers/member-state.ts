import { decodePlain, encodePlain } from '../../agent/run/plain-value.js';
import type { AgentSnapshot } from '../../agent/run/agent-snapshot.js';
import type { MemberSnapshot, SceneMember } from '../../scene/scene-member.js';
import type { SpeechLog } from '../../scene/speech-log.js';

type Stored = MemberSnapshot & { agent: AgentSnapshot };

/** A member between turns, with its agent, as JSON: what a partition's commit stores for the next owner. */
export function memberText(member: SceneMember): string {
  return JSON.stringify(encodePlain({ ...member.snapshot(), agent: member.runtime.snapshot() }));
}

/**
 * Where, in this process's speech log, a member whose last turn was at a tick had heard up to:
 * everything said before that tick (a tick's turns all begin before any of them speaks). Speech
 * positions are per process; ticks are the same everywhere.
 */
export function heardPositions(speech: SpeechLog): (lastTurn: number | null) => number {
  const { entries, seq } = speech.snapshot();
  return (lastTurn) => {
    if (lastTurn === null) return 0;
    if (entries.length === 0) return seq;
    let upTo = entries[0]!.seq - 1;
    for (const entry of entries) {
      if (entry.tick >= lastTurn) break;
      upTo = entry.seq;
    }
    return upTo;
  };
}

/**
 * Takes up the state the partition's last owner committed. What the member heard is placed in
 * this process's speech log by its last turn's tick; what woke it since the commit is applied
 * after (`rewake`).
 */
export function restoreMember(member: SceneMember, text: string, heardUpTo: (lastTurn: number | null) => number): void {
  const saved = decodePlain(JSON.parse(text)) as Stored;
  member.restore({ ...saved, heardUpTo: heardUpTo(saved.lastThinkTick) });
  void member.runtime.resume(saved.agent);
}
