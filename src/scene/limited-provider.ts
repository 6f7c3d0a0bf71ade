import type { LimitFunction } from 'p-limit';
import { providerIdentity } from '../llm/provider-identity.js';
import type { ModelRequest, ModelResponse, Provider, StreamEvent } from '../llm/types.js';

/**
 * A provider whose calls take a slot of `limiter` first: the scene-wide cap on concurrent model
 * calls per provider. A call aborted while it waits for a slot rejects at once and, when its slot
 * comes, gives it straight back; streaming stays available and counts against the same slots.
 */
export function limitedProvider(provider: Provider, limiter: LimitFunction): Provider {
  const limited: Provider = {
    ...providerIdentity(provider),
    complete: (request) => whenSlotFree(limiter, request, () => provider.complete(request)),
  };
  if (provider.stream !== undefined) {
    // Looked up at each call, not once: a provider may stream at some moments only (one that
    // answers from a log while a resume replays it does not).
    Object.defineProperty(limited, 'stream', {
      enumerable: true,
      get: () => {
        const open = provider.stream;
        return open === undefined ? undefined : (request: ModelRequest) => streamWhenSlotFree(limiter, request, () => open.call(provider, request));
      },
    });
  }
  return limited;
}

/** A stream holds its slot from before the request until the last event, or until it is dropped. */
async function* streamWhenSlotFree(limiter: LimitFunction, request: ModelRequest, open: () => AsyncIterable<StreamEvent>): AsyncGenerator<StreamEvent> {
  const release = await slot(limiter, request.signal);
  try {
    yield* open();
  } finally {
    release();
  }
}

/** Waits for a slot and resolves with the function that gives it back. */
function slot(limiter: LimitFunction, signal: AbortSignal): Promise<() => void> {
  return new Promise((resolve, reject) => {
    let waiting = true;
    const onAbort = (): void => {
      if (!waiting) return;
      waiting = false;
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    limiter(
      () =>
        new Promise<void>((release) => {
          signal.removeEventListener('abort', onAbort);
          if (!waiting || signal.aborted) {
            onAbort();
            return release();
          }
          waiting = false;
          resolve(release);
        }),
    ).catch((error: unknown) => {
      if (!waiting) return;
      waiting = false;
      reject(error);
    });
  });
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
