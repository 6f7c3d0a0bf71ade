import type { Bus, Unsubscribe } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import type { SceneRecipe } from '../bus/event-data.js';
import { createSessionLog, type SessionLog } from '../record/session-log.js';

/** The `--log` file of one run, and what the CLI does to make sure it records everything. */
export type RunLog = {
  /** What the scene gets as `context.log`. */
  readonly log: SessionLog;
  /** Keeps what `bus` publishes until `ensureRecording` knows whether the scene attached the log. */
  watch(bus: Bus): void;
  /**
   * After `create`: when the scene did not attach the log to a bus itself (it ignored
   * `context.log`), writes the events seen so far and records from `bus` on.
   */
  ensureRecording(bus: Bus): void;
  /** Closes the file; resolves with a problem to report, if writing or closing failed. */
  close(): Promise<string | undefined>;
};

/**
 * Opens the session log for `--log`, its first line the run's recipe (throws a `LogError` when it
 * cannot, or when the file holds a run already: that one is resumed, not overwritten); `watch` it on the
 * scene's bus as soon as that exists. A scene passes `context.log` to `createScene`, which attaches it and uses it for the
 * write-ahead check before each tool call; the CLI attaches it only when the scene did not, so
 * no event is recorded twice.
 */
export function openRunLog(path: string, recipe: SceneRecipe): RunLog {
  const inner = createSessionLog(path, { recipe, ...(recipe.checkpoints !== undefined && { checkpoints: recipe.checkpoints }) });
  let attached = false;
  const early: Envelope[] = [];
  let stopBuffering: Unsubscribe | undefined;
  const log: SessionLog = {
    get path() {
      return inner.path;
    },
    get run() {
      return inner.run;
    },
    get failure() {
      return inner.failure;
    },
    attach(target) {
      attached = true;
      return inner.attach(target);
    },
    record: (event) => inner.record(event),
    assertRecorded: (event) => inner.assertRecorded(event),
    flush: () => inner.flush(),
    checkpoint: (tick, snapshot) => inner.checkpoint?.(tick, snapshot),
    close: () => inner.close(),
    closeSync: () => inner.closeSync(),
  };
  return {
    log,
    watch(bus) {
      stopBuffering ??= bus.on('*', (event) => void early.push(event));
    },
    ensureRecording(target) {
      stopBuffering?.();
      stopBuffering = undefined;
      if (!attached) {
        for (const event of early) inner.record(event);
        log.attach(target);
      }
      early.length = 0;
    },
    async close() {
      stopBuffering?.();
      try {
        await inner.close();
      } catch (error) {
        return (error as Error).message;
      }
      return inner.failure?.message;
    },
  };
}
