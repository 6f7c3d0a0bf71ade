import type { Bus, Unsubscribe } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import { safeJson } from '../bus/serialize-event.js';

/** Writes one line. */
export type WriteLine = (line: string) => void;

/**
 * Prints a readable transcript of what the agents on a bus do: who said what, which tools ran,
 * and every correction the runtime made them.
 */
export function printTranscript(bus: Bus, write: WriteLine): Unsubscribe {
  return bus.on('*', (event) => {
    const line = describe(event);
    if (line !== undefined) write(line);
  });
}

function describe(event: Envelope): string | undefined {
  const who = event.agent ?? 'troupe';
  switch (event.type) {
    case 'agent.said':
      return `${who}: ${event.data.text}`;
    case 'tool.started':
      return `  → ${event.data.name} ${brief(event.data.args)}`;
    case 'tool.completed':
      return `  ✓ ${event.data.name} → ${brief(event.data.output)}`;
    case 'tool.failed':
      return `  ✗ ${event.data.name} failed (${event.data.error.kind}): ${event.data.error.message}`;
    case 'tool.rejected':
      return `  ⚠ correction: ${event.data.message}`;
    case 'action.malformed':
      return `  ⚠ correction (${event.data.code}): ${event.data.message}`;
    case 'tool.approval.requested':
      return `  ? ${event.data.name} waits for approval (${event.data.callId})`;
    case 'llm.error':
      return `  ! model error (${event.data.kind}, attempt ${event.data.attempt}): ${event.data.message}`;
    case 'agent.finished':
      return `${who} finished: ${event.data.reason} after ${event.data.rounds} round(s), ${event.data.stats.calls} call(s)`;
    default:
      return undefined;
  }
}

function brief(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : safeJson(value, { maxChars: 200 }).text;
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
