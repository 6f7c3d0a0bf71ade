/** The result of a pure stage: a value, or a problem the caller decides what to do with. */
export type Outcome<TValue, TProblem> = { ok: true; value: TValue } | { ok: false; problem: TProblem };

/** Wraps a value as a successful outcome. */
export const success = <TValue>(value: TValue): { ok: true; value: TValue } => ({ ok: true, value });

/** Wraps a problem as a failed outcome. */
export const failure = <TProblem>(problem: TProblem): { ok: false; problem: TProblem } => ({ ok: false, problem });
