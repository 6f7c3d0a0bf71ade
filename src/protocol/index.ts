/** The `<ACTION>` protocol: parsing model output into raw calls, and rendering calls as XML. */
export * from './types.js';
export { parseOutput, type ParseOptions } from './parse-output.js';
export { createActionScanner, type ActionScanner, type ScanFinish, type ScanProgress } from './scan-output.js';
export { parseNativeCalls } from './parse-native.js';
export { parseBlock, type BlockSpan, type ParseBlockOptions } from './parse-block.js';
export { splitElements, decodeText } from './xml-elements.js';
export { parseCheckedJson, type CheckedJsonCategory, type CheckedJsonOptions, type CheckedJsonProblem } from './json-checked.js';
export { FORBIDDEN_NAMES, isForbiddenName } from './forbidden-names.js';
export { renderAction, renderCall, type RenderableCall, type RenderOptions } from './render-call.js';
