import type { LimitFunction } from 'p-limit';
import type { ModelRequest, ModelResponse, Provider } from '../llm/types.js';

/**
 * A provider whose calls take a slot of `limiter` first: the scene-wide cap on concurrent model
 * calls per provider. A call aborted while it waits for a slot rejects at once and, when its slot
 * comes, gives it straight back; streaming stays available and counts against the same slots.
 */
export function limitedProvider(provider: Provider, limiter: LimitFunction): Provider {
  const limited: Provider = {
    name: provider.name,
    ...(provider.model !== undefined && { model: provider.model }),
    complete: (request) => whenSlotFree(limiter, request, () => provider.complete(request)),
  };
  return limited;
}

function whenSlotFree(limiter: LimitFunction, request: ModelRequest, call: () => Promise<ModelResponse>): Promise<ModelResponse> {
  const { signal } = request;
  return new Promise<ModelResponse>((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    limiter(async () => {
      signal.removeEventListener('abort', onAbort);
      if (settled) return;
      if (signal.aborted) return onAbort();
      try {
        resolve(await call());
      } catch (error) {
        reject(error);
      } finally {
        settled = true;
      }
    }).catch((error: unknown) => {
      // Only a queue cleared by someone else rejects here.
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}
