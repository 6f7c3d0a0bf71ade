import type { JsonValue } from '../bus/event-data.js';

export type { JsonValue } from '../bus/event-data.js';

/**
 * A place in the world: dot-separated keys (`'tavern.stock.ale'`, array indexes as digits), or the
 * keys as a list when one contains a dot. The empty path is the whole document.
 */
export type WorldPath = string | readonly (string | number)[];

/** Read access to the world, as brains and tools get it. Values are frozen copies. */
export type WorldReader = {
  /** The value at `path`, or `undefined` when nothing is there. */
  get(path?: WorldPath): JsonValue | undefined;
  has(path: WorldPath): boolean;
};

/** Who changed the world, for `world.changed`. */
export type WorldWriter = { agent?: string; cause?: string };

/**
 * The shared world document. It changes only through tools (and the host): every change is a
 * `world.changed` event, published in commit order. Writes to overlapping paths are serialized by
 * `update`, which holds the path exclusively while its function runs (even across awaits).
 */
export type WorldState = WorldReader & {
  /** Replaces the value at `path` (creating parent objects). Throws on a value that is not JSON. */
  set(path: WorldPath, value: JsonValue, writer?: WorldWriter): void;
  /** Removes the value at `path`; `world.changed` carries `value: undefined`. */
  delete(path: WorldPath, writer?: WorldWriter): boolean;
  /**
   * Read-modify-write under an exclusive lock on `path`: `fn` gets the current value and returns
   * the next one (or `undefined` to leave it). Concurrent updates of overlapping paths run one
   * at a time, in the order they were asked for.
   */
  update<T extends JsonValue | undefined>(
    path: WorldPath,
    fn: (current: JsonValue | undefined) => T | Promise<T>,
    options?: WorldWriter & { signal?: AbortSignal },
  ): Promise<T>;
  /** A frozen copy of the whole document. */
  snapshot(): JsonValue;
};
