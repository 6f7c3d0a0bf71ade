/**
 * Extended thinking: a token budget (`{ type: 'enabled', budget_tokens }`, at least 1,024), or
 * `'adaptive'` (`{ type: 'adaptive' }`, the model decides; what newer models expect). Kept apart
 * from the request mapping so that the adapter's public types name nothing of the client library.
 */
export type AnthropicThinking = { budgetTokens: number } | 'adaptive';
