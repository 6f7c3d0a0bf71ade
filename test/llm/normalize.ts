import type { Envelope } from '../../src/index.js';

/** An event as two runs of the same exchange must agree on it. */
export type NormalEvent = { type: string; agent?: string; data: unknown };

const STREAMED = new Set(['llm.delta', 'llm.reasoning']);

/**
 * Reduces a run's events to what must be the same whichever provider served the same exchange:
 * ids, times, causes and latencies dropped; the provider's name and model dropped; runs of
 * streamed text (`llm.delta`, `llm.reasoning`) of one round and attempt merged into one event,
 * and `llm.tool_call.delta` pieces merged per call — chunk boundaries differ between providers,
 * what they add up to must not.
 */
export function normalizeEvents(events: readonly Envelope[]): NormalEvent[] {
  const out: NormalEvent[] = [];
  for (const event of events) {
    const data = { ...(event.data as Record<string, unknown>) };
    delete data['latencyMs'];
    if (event.type === 'llm.request') {
      delete data['provider'];
      delete data['model'];
    }
    if (event.type === 'agent.finished') delete (data['stats'] as Record<string, unknown> | undefined)?.['durationMs'];
    // A cost comes from the model's price, and the provider's model is dropped above too.
    withoutCost(data);
    if (typeof data['stats'] === 'object' && data['stats'] !== null) withoutCost((data['stats'] = { ...(data['stats'] as Record<string, unknown>) }) as Record<string, unknown>);
    const last = out.at(-1);
    const lastData = last?.data as Record<string, unknown> | undefined;
    if (STREAMED.has(event.type)) {
      if (last?.type === event.type && lastData?.['round'] === data['round'] && lastData?.['attempt'] === data['attempt']) {
        lastData!['text'] = `${String(lastData!['text'])}${String(data['text'])}`;
        continue;
      }
    } else if (event.type === 'llm.tool_call.delta') {
      const merged = mergeCallDelta(out, data);
      if (merged) continue;
      data['arguments'] = data['argumentsDelta'];
      delete data['argumentsDelta'];
    }
    const normal: NormalEvent = { type: event.type, data };
    if (event.agent !== undefined) normal.agent = event.agent;
    out.push(normal);
  }
  return out;
}

/** Adds a tool-call piece to the earlier event of the same call, if one is still in this run of pieces. */
function mergeCallDelta(out: NormalEvent[], data: Record<string, unknown>): boolean {
  for (let index = out.length - 1; index >= 0 && out[index]!.type === 'llm.tool_call.delta'; index--) {
    const earlier = out[index]!.data as Record<string, unknown>;
    if (earlier['round'] !== data['round'] || earlier['attempt'] !== data['attempt'] || earlier['index'] !== data['index']) continue;
    earlier['arguments'] = `${String(earlier['arguments'])}${String(data['argumentsDelta'])}`;
    if (data['id'] !== undefined) earlier['id'] = data['id'];
    if (data['name'] !== undefined) earlier['name'] = data['name'];
    return true;
  }
  return false;
}

/** Drops `usage.costUsd` (copying the usage, which the event still holds). */
function withoutCost(data: Record<string, unknown>): void {
  const usage = data['usage'];
  if (typeof usage !== 'object' || usage === null || !('costUsd' in usage)) return;
  const { costUsd: _cost, ...rest } = usage as Record<string, unknown>;
  data['usage'] = rest;
}
