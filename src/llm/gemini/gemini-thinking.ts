/**
 * Gemini's thinking controls (`thinkingConfig`); models without thinking ignore them. Kept apart
 * from the request mapping so that the adapter's public types name nothing of the client library.
 */
export type GeminiThinking = {
  /** Tokens the model may think for: 0 turns thinking off, -1 lets the model decide. */
  budgetTokens?: number;
  /** Stream the model's thought summaries (troupe's `reasoning` events). */
  includeThoughts?: boolean;
};
