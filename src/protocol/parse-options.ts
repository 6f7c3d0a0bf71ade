/**
 * The options shared by the parse entry points (`parseOutput`, `createActionScanner`,
 * `parseNativeCalls`), and their defaults.
 */
import type { FinishReason } from '../llm/types.js';
import { DEFAULT_LIMITS, type ProtocolLimits } from './types.js';

/** How to parse one model output: limits, how the turn ended, and how calls are named. */
export type ParseOptions = {
  /** Overrides of `DEFAULT_LIMITS`. */
  limits?: Partial<ProtocolLimits>;
  /** How the model turn ended; `length` never runs an open block. */
  finishReason?: FinishReason;
  /** The stop sequence the provider stripped, when `finishReason` is `stop_sequence`. */
  stopSequence?: string;
  /** The id of the call at `index` (0-based) in the block (default: `call_${index + 1}`). */
  callId?: (index: number) => string;
};

/** `ParseOptions` with every default filled in. */
export type ResolvedParseOptions = {
  limits: ProtocolLimits;
  finishReason: FinishReason | undefined;
  stopSequence: string | undefined;
  callId: (index: number) => string;
};

/** The default call ids: `call_1`, `call_2`, … */
function defaultCallId(index: number): string {
  return `call_${index + 1}`;
}

/** `resolveParseOptions()` with no options: shared, since it is frozen. */
const DEFAULT_OPTIONS: Readonly<ResolvedParseOptions> = Object.freeze({
  limits: DEFAULT_LIMITS,
  finishReason: undefined,
  stopSequence: undefined,
  callId: defaultCallId,
});

/** Fills in the defaults of `ParseOptions`. */
export function resolveParseOptions(options?: ParseOptions): ResolvedParseOptions {
  if (options === undefined) return DEFAULT_OPTIONS;
  return {
    // Agents pass the shared defaults object itself unless they set limits: no copy per parse.
    limits:
      options.limits === undefined || options.limits === DEFAULT_LIMITS
        ? DEFAULT_LIMITS
        : { ...DEFAULT_LIMITS, ...definedOnly(options.limits) },
    finishReason: options.finishReason,
    stopSequence: options.stopSequence,
    callId: options.callId ?? defaultCallId,
  };
}

const LIMIT_KEYS = ['maxActionChars', 'maxCallsPerAction', 'maxDepth', 'maxIssues'] as const;

/** Drops `undefined` entries so `{ maxDepth: undefined }` keeps the default. */
function definedOnly(limits: Partial<ProtocolLimits>): Partial<ProtocolLimits> {
  const result: Partial<ProtocolLimits> = {};
  for (const key of LIMIT_KEYS) {
    const value = limits[key];
    if (typeof value === 'number' && !Number.isNaN(value)) result[key] = value;
  }
  return result;
}
