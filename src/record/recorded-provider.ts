import type { ModelRequest, ModelResponse, Provider, StreamEvent } from '../llm/types.js';
import { LiveAgain, type ReplayDriver } from './replay-driver.js';

/**
 * A provider that answers from the log while a run is replayed: a deliberation the log holds gets
 * its recorded reply (or failure) when the run reaches it, and the model is not asked (a `pure`
 * provider, a scripted brain, is asked again: it costs nothing and draws what it drew). Anything
 * the log does not hold — a call the log asked but never answered, a repair's or a summary's call,
 * every call once the log is used up — goes to the real provider. While replaying it does not
 * stream: what the model streamed comes from the log.
 */
export function recordedProvider(live: Provider, driver: ReplayDriver): Provider {
  // A scripted brain is asked again: its answer is checked against the log like any event.
  if (live.pure === true) return live;
  const liveCall = (request: ModelRequest): ModelResponse | Promise<ModelResponse> =>
    live.completeNow !== undefined ? live.completeNow(request) : live.complete(request);
  const completeNow = (request: ModelRequest): ModelResponse | Promise<ModelResponse> => {
    const recorded = driver.asking(request.agent) ? driver.reply(request.agent) : undefined;
    if (recorded === undefined) return liveCall(request);
    if (!(recorded instanceof Promise)) return recorded;
    return recorded.catch((error: unknown) => {
      if (error instanceof LiveAgain) return liveCall(request);
      throw error;
    });
  };
  const provider: Provider = {
    name: live.name,
    ...(live.model !== undefined && { model: live.model }),
    ...(live.accepts !== undefined && { accepts: live.accepts }),
    completeNow,
    complete: async (request) => completeNow(request),
  };
  if (live.stream !== undefined) {
    const stream = live.stream.bind(live);
    // Looked up at each deliberation: no streaming while the log answers, the real stream after.
    Object.defineProperty(provider, 'stream', {
      enumerable: true,
      get: (): ((request: ModelRequest) => AsyncIterable<StreamEvent>) | undefined => (driver.replaying ? undefined : stream),
    });
  }
  return provider;
}
