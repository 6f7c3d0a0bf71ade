import type { NativeToolCall } from '../types.js';

/**
 * The sentinel Google documents for function calls whose signature was lost (a history rebuilt,
 * resumed, or written by another model): it tells Gemini 3 to skip the signature check.
 * https://ai.google.dev/gemini-api/docs/thought-signatures
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/** How many signed calls one provider remembers (a run's worth, with room to spare). */
const CAPACITY = 1024;

/**
 * Thinking Gemini models sign their function calls (`thoughtSignature` on the `functionCall`
 * part, only the first part of a parallel batch) and Gemini 3 answers 400 when a call in the
 * history comes back without its signature. troupe's messages have no field for it, so the
 * adapter remembers each signature by the call it came with (id, name and arguments, exactly as
 * returned) and puts it back when that call is sent again. Owned by one provider; the oldest
 * entries go first.
 */
export class ThoughtSignatures {
  private readonly byCall = new Map<string, string>();

  remember(call: NativeToolCall, signature: string): void {
    const key = keyOf(call);
    this.byCall.delete(key);
    this.byCall.set(key, signature);
    if (this.byCall.size > CAPACITY) this.byCall.delete(this.byCall.keys().next().value!);
  }

  recall(call: NativeToolCall): string | undefined {
    return this.byCall.get(keyOf(call));
  }
}

function keyOf(call: NativeToolCall): string {
  return `${call.id}\u0000${call.name}\u0000${call.arguments}`;
}

/** Gemini 3 and later enforce signatures; older models accept calls without them. */
export function enforcesSignatures(model: string): boolean {
  const major = /(?:^|\/)gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}
