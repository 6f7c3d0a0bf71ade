/** Memory's building blocks: `import { countTokens, tokenizerFor } from 'troupe/memory'`. */
export { dropOldest, summarizeOldest, transcriptText } from './compaction.js';
export type { CompactionPolicy, CompactionRequest, CompactionResult, MemoryTurn, SummarizeOptions, Summarizer } from './compaction.js';
export type { AgentMemory, MemoryOptions } from './agent-memory.js';
export type { MessageQuery, MessageRole } from './message-query.js';
export { countMessageTokens, countTokens, encodingFor, tokenizerFor, MESSAGE_OVERHEAD_TOKENS } from './token-count.js';
export type { TokenCounter, TokenEncoding, Tokenizer } from './token-count.js';
export { READ_VAR } from './read-var-tool.js';
export type { VariableInfo, VariableLimits, VariableRead } from './variables.js';
