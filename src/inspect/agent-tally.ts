import type { Envelope } from '../bus/events.js';

/**
 * What the events say of one agent: its last machine state, the turns it took and how its last
 * run ended, what woke it and what it last said, and its counts. The inspector page keeps the same
 * view and counts the same way (`page/model.js`), so a summary of events the page never got plus
 * the events it did get give the page exact totals.
 */
export type AgentSummary = {
  name: string;
  /** The last machine state (`idle` before any). */
  state: string;
  tools?: string[];
  protocol?: string;
  /** Turns begun (`agent.triggered`). */
  turns: number;
  /** The deliberation of the last turn. */
  round: number;
  /** What woke it last: `speech (bard)`. */
  trigger?: string;
  /** How its last run ended (`agent.finished`). */
  lastReason?: string;
  /** Its last words (`agent.said`), cut to `MAX_SAID_CHARS`. */
  lastSaid?: string;
  /** Tool calls that ran (completed or failed). */
  calls: number;
  failures: number;
  /** Malformed blocks and rejected calls (a denial is not a correction). */
  corrections: number;
};

/** Longest last words kept: a summary travels to every late page. */
const MAX_SAID_CHARS = 500;

/** Per-agent summaries, folded one event at a time. */
export type AgentTally = {
  /** Folds one event in. */
  apply(event: Envelope): void;
  /** The summaries, in the order the agents first appeared. */
  list(): AgentSummary[];
  /** An independent copy, to fold more events into. */
  clone(): AgentTally;
  /** Agents summarized. */
  readonly size: number;
};

/**
 * A tally of agents from events. Events of other types cost one switch; an agent's summary is made
 * when an event first names it.
 *
 * @example
 * const tally = createAgentTally();
 * for (const event of readLog('run.jsonl').events) tally.apply(event);
 * tally.list(); // [{ name: 'innkeeper', state: 'done', turns: 20, lastReason: 'turn_ended', … }]
 */
export function createAgentTally(from?: Iterable<AgentSummary>): AgentTally {
  const agents = new Map<string, AgentSummary>();
  for (const summary of from ?? []) agents.set(summary.name, { ...summary, ...(summary.tools !== undefined && { tools: [...summary.tools] }) });
  const of = (name: string): AgentSummary => {
    let summary = agents.get(name);
    if (summary === undefined) {
      summary = { name, state: 'idle', turns: 0, round: 0, calls: 0, failures: 0, corrections: 0 };
      agents.set(name, summary);
    }
    return summary;
  };
  const tally: AgentTally = {
    apply(event) {
      const name = event.agent;
      if (name === undefined || name === '') return;
      const data = event.data as Record<string, unknown>;
      switch (event.type) {
        case 'agent.spawned': {
          const agent = of(name);
          if (Array.isArray(data.tools)) agent.tools = data.tools.map(String);
          if (typeof data.protocol === 'string') agent.protocol = data.protocol;
          return;
        }
        case 'agent.state':
          of(name).state = String(data.to);
          return;
        case 'agent.triggered': {
          const agent = of(name);
          agent.turns++;
          agent.round = 0;
          agent.trigger = `${String(data.reason)}${data.detail ? ` (${String(data.detail)})` : ''}`;
          return;
        }
        case 'llm.request':
          if (typeof data.round === 'number') of(name).round = data.round;
          return;
        case 'agent.said':
          of(name).lastSaid = String(data.text ?? '').slice(0, MAX_SAID_CHARS);
          return;
        case 'tool.completed':
          of(name).calls++;
          return;
        case 'tool.failed': {
          const agent = of(name);
          agent.calls++;
          agent.failures++;
          return;
        }
        case 'tool.rejected':
          if (data.code !== 'denied') of(name).corrections++;
          return;
        case 'action.malformed':
          of(name).corrections++;
          return;
        case 'agent.finished':
          of(name).lastReason = String(data.reason);
          return;
        default:
      }
    },
    list: () => [...agents.values()].map((summary) => ({ ...summary })),
    clone: () => createAgentTally(agents.values()),
    get size() {
      return agents.size;
    },
  };
  return tally;
}
