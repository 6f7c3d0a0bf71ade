/** Something a dispatch must stop when it is aborted: a running attempt or a queued slot request. */
export type Stoppable = { stop(reason: unknown): void };

/**
 * What stops one dispatch: the agent's signal, or the dispatcher itself after a host failure.
 *
 * It replaces `AbortSignal.any`, which costs tens of microseconds per call in Node 20 and keeps
 * every dependent signal alive as long as the agent's signal lives. The scope adds at most one
 * listener to the agent's signal, and only once something actually waits (an attempt that went
 * async, a queued slot, a backoff); a dispatch whose tools all answer synchronously adds none and
 * notices an abort by polling `check()` between calls.
 */
export class StopScope {
  /** Why the dispatch stopped; meaningful once `stopped` is true. */
  reason: unknown = undefined;
  stopped = false;
  /** Holds the agent's signal, read only once it is needed: a getter may make it then. */
  readonly #agent: { readonly signal: AbortSignal };
  /** Turns true with the agent's signal, and is cheaper to read (see `DispatchOptions.abortFlag`). */
  readonly #flag: { readonly aborted: boolean };
  #waiting: Set<Stoppable> | undefined;
  #onAgentAbort: (() => void) | undefined;
  #controller: AbortController | undefined;

  constructor(agent: { readonly signal: AbortSignal; readonly abortFlag?: { readonly aborted: boolean } | undefined }) {
    this.#agent = agent;
    this.#flag = agent.abortFlag ?? agent.signal;
  }

  /** Whether the dispatch is stopped, noticing an agent abort even when nothing is listening yet. */
  check(): boolean {
    if (!this.stopped && this.#flag.aborted) this.stop(this.#agent.signal.reason);
    return this.stopped;
  }

  /** Registers something to stop on abort; stops it at once when the dispatch already is stopped. */
  add(item: Stoppable): void {
    if (this.check()) {
      item.stop(this.reason);
      return;
    }
    this.#listen();
    (this.#waiting ??= new Set()).add(item);
  }

  /** Forgets an item that finished on its own. */
  delete(item: Stoppable): void {
    this.#waiting?.delete(item);
  }

  /** Stops the dispatch: every registered item, then the lazily made `signal`. Idempotent. */
  stop(reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reason = reason;
    const items = this.#waiting;
    this.#waiting = undefined;
    if (items !== undefined) for (const item of items) item.stop(reason);
    this.#controller?.abort(reason);
  }

  /** A signal that aborts with the dispatch, for APIs that want one (the injected `sleep`). Made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.check()) this.#controller.abort(this.reason);
      else this.#listen();
    }
    return this.#controller.signal;
  }

  /** Removes the listener from the agent's signal; call once the dispatch has settled. */
  close(): void {
    if (this.#onAgentAbort === undefined) return;
    this.#agent.signal.removeEventListener('abort', this.#onAgentAbort);
    this.#onAgentAbort = undefined;
  }

  #listen(): void {
    if (this.#onAgentAbort !== undefined) return;
    this.#onAgentAbort = () => this.stop(this.#agent.signal.reason);
    this.#agent.signal.addEventListener('abort', this.#onAgentAbort, { once: true });
  }
}
