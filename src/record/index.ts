/** The session log: `import { createSessionLog, readLog } from 'troupe/record'`. */
export { createSessionLog } from './session-log.js';
export type { SessionLog, SessionLogOptions } from './session-log.js';
export { readLog } from './read-log.js';
export { DEFAULT_MAX_INLINE_BINARY_BYTES } from './binary-parts.js';
export type { LoggedImage, LoggedResult } from './binary-parts.js';
