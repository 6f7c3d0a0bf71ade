import { ConfigError } from '../../errors.js';
import { Memory, type MemoryOptions } from './agent-memory.js';

/** Checks the `memory` option and builds the agent's memory; `undefined` leaves runs independent. */
export function resolveMemory(
  options: MemoryOptions | boolean | undefined,
  provider: { name: string; model?: string | undefined },
  maxObservationChars: number,
  agent: string,
): Memory | undefined {
  if (options === undefined || options === false) return undefined;
  const resolved = options === true ? {} : options;
  if (resolved === null || typeof resolved !== 'object') throw new ConfigError(`createAgent "${agent}": memory must be true or an object of options`);
  const { maxTokens, history, compaction, countTokens, previewChars, variables } = resolved;
  if (maxTokens !== undefined && (!Number.isSafeInteger(maxTokens) || maxTokens < 1)) {
    throw new ConfigError(`createAgent "${agent}": memory.maxTokens must be a positive integer, got ${String(maxTokens)}`);
  }
  if (history !== undefined && history !== 'full' && history !== 'compact') {
    throw new ConfigError(`createAgent "${agent}": memory.history must be 'full' or 'compact', got ${JSON.stringify(history)}`);
  }
  if (compaction !== undefined && (compaction === null || typeof compaction.compact !== 'function' || typeof compaction.name !== 'string')) {
    throw new ConfigError(`createAgent "${agent}": memory.compaction must be a policy { name, compact(request) } (try dropOldest() or summarizeOldest(...))`);
  }
  if (countTokens !== undefined && typeof countTokens !== 'function') {
    throw new ConfigError(`createAgent "${agent}": memory.countTokens must be a function of text`);
  }
  if (previewChars !== undefined && (!Number.isSafeInteger(previewChars) || previewChars < 1)) {
    throw new ConfigError(`createAgent "${agent}": memory.previewChars must be a positive integer, got ${String(previewChars)}`);
  }
  for (const key of ['maxCount', 'maxChars'] as const) {
    const value = variables?.[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new ConfigError(`createAgent "${agent}": memory.variables.${key} must be a positive integer, got ${String(value)}`);
    }
  }
  // A page of read_var fits one observation uncut, with room for its header line.
  const pageChars = Math.max(100, Math.min(4_000, maxObservationChars - 200));
  return new Memory(resolved, provider, pageChars);
}
