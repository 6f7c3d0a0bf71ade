import { guardedCall, guardedStream, type AdapterContext } from './adapter-kit.js';
import type { AdapterOptions } from './adapter-options.js';
import type { LeasedKey } from './key-ring.js';
import type { ModelRequest, ModelResponse, Provider, ProviderAccepts, StreamEvent } from './types.js';

/** What an adapter does with its client library: make a client for a key, and make one request each way. */
export type ClientCalls<Client> = {
  /** What the adapter's models take besides text, before the caller's own `accepts`. */
  accepts: Required<ProviderAccepts>;
  /** A client for one key (undefined for a server that takes none). */
  client(key: LeasedKey | undefined): Client;
  complete(client: Client, request: ModelRequest, signal: AbortSignal): Promise<ModelResponse>;
  stream(client: Client, request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> | Promise<AsyncIterable<StreamEvent>>;
};

/**
 * The Provider every adapter hands out: named by its context, each request sent with the client
 * of the key the ring leases, under the silence timer, its failures classified (`guardedCall`,
 * `guardedStream`).
 */
export function clientProvider<Client>(context: AdapterContext, options: AdapterOptions, calls: ClientCalls<Client>): Provider {
  // One client per key, made when the key is first used: the key is the client's only credential.
  const clients = new Map<number, Client>();
  const clientFor = (key: LeasedKey | undefined): Client => {
    const index = key?.index ?? -1;
    let client = clients.get(index);
    if (client === undefined) {
      client = calls.client(key);
      clients.set(index, client);
    }
    return client;
  };
  return {
    name: context.provider,
    model: options.model,
    accepts: Object.freeze({ ...calls.accepts, ...options.accepts }),
    complete: (request) => guardedCall(context, request, (key, signal) => calls.complete(clientFor(key), request, signal)),
    stream: (request) => guardedStream(context, request, (key, signal) => calls.stream(clientFor(key), request, signal)),
  };
}
