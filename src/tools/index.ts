/** Tools, validation and the dispatcher on their own: `import { createRegistry, dispatchCalls } from 'troupe/tools'`. */
export { defineTool } from './define-tool.js';
export { createRegistry } from './registry.js';
export type { Registry } from './registry.js';
export { validateCalls } from './validate-calls.js';
export { classifyError, createDispatchStats, createToolLimiters, dispatchCalls, ToolError } from './dispatch-calls.js';
export type { CallEntry, CallResult, DispatchOptions, DispatchStats, ToolErrorOptions, ToolLimiters } from './dispatch-calls.js';
export { toolResult, isToolResult, sniffImage, RESULT_LIMITS, IMAGE_MEDIA_TYPES } from './result-parts.js';
export type { ImageMediaType, ImagePart, JsonPart, ResultPart, ResultPartInfo, TextPart, ToolResult } from './result-parts.js';
export type * from './types.js';
export type { FromJsonSchema } from './infer-json-schema.js';
