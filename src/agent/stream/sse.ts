import { safeJson } from '../../bus/safe-json.js';
import type { AgentStreamEvent } from './stream-event.js';

/** The headers of a Server-Sent Events response: an event stream no proxy buffers or caches. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx buffers a proxied response unless told not to.
  'x-accel-buffering': 'no',
});

/**
 * One event as Server-Sent Events text: `event: <type>`, `data: <JSON>` (one line: JSON escapes
 * line breaks) and a blank line. The JSON never throws (`safeJson`: cycles, BigInt, … replaced).
 */
function sseFrame(event: AgentStreamEvent): string {
  return `event: ${event.type}\ndata: ${safeJson(event).text}\n\n`;
}

/** The bytes of an event stream, pulled as the reader reads; cancelling the body stops the events. */
export function sseBody(events: AsyncIterator<AgentStreamEvent>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await events.next();
      if (next.done === true) controller.close();
      else controller.enqueue(encoder.encode(sseFrame(next.value)));
    },
    async cancel() {
      await events.return?.();
    },
  });
}
