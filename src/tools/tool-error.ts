import type { ToolErrorKind } from './types.js';

/** Whether each kind of failure is worth retrying when a tool does not say otherwise. */
export const RETRYABLE_BY_DEFAULT: Readonly<Record<ToolErrorKind, boolean>> = Object.freeze({
  execution: false,
  timeout: true,
  network: true,
  rate_limit: true,
  permission: false,
  not_found: false,
  aborted: false,
  unknown: false,
});

/** The options of `new ToolError(message, options)`. */
export type ToolErrorOptions = {
  /** Default `execution`. */
  kind?: ToolErrorKind;
  /**
   * Default: `RETRYABLE_BY_DEFAULT[kind]` (true for `network`, `rate_limit` and `timeout`). `true`
   * lets even an `execution` failure be retried — by a `readOnly` or `idempotent` tool only.
   */
  retryable?: boolean;
  /** What the model could do about it, shown in the observation. */
  hint?: string;
  cause?: unknown;
};

/**
 * An error a tool throws to classify its own failure: the dispatcher reports `kind`, `retryable`
 * and `hint` exactly as given instead of guessing from the error.
 *
 * @example
 * execute: async ({ id }) => {
 *   const player = roster.get(id);
 *   if (!player) throw new ToolError(`no player ${id}`, { kind: 'not_found', hint: 'list_players shows valid ids' });
 *   return player;
 * }
 */
export class ToolError extends Error {
  readonly kind: ToolErrorKind;
  readonly retryable: boolean;
  readonly hint: string | undefined;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = options.kind ?? 'execution';
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT[this.kind];
    this.hint = options.hint;
  }
}
