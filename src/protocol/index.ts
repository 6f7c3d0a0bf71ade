/** The `<ACTION>` protocol on its own: `import { parseOutput, createActionScanner } from 'troupe/protocol'`. */
export { renderManifest } from './manifest.js';
export type { ManifestExample, ManifestOptions } from './manifest.js';
export { parseOutput } from './parse-output.js';
export { parseNativeCalls } from './parse-native.js';
export { createActionScanner } from './scan-output.js';
export { renderAction, renderCall } from './render-call.js';
export { DEFAULT_LIMITS } from './types.js';
export type * from './types.js';
