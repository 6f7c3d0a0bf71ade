/** The session log, resume and replay: `import { createSessionLog, readLog, resumeScene, replayScene } from 'troupe/record'`. */
export { createSessionLog } from './session-log.js';
export type { SessionLog, SessionLogOptions } from './session-log.js';
export { readLog } from './read-log.js';
export { DEFAULT_MAX_INLINE_BINARY_BYTES } from './binary-parts.js';
export type { LoggedImage, LoggedResult } from './binary-parts.js';
export { resumeScene, openResume, readRecipe, describeDivergence } from './resume-scene.js';
export type { ResumeSceneOptions, ResumeResult, OpenedResume, RebuildOptions } from './resume-scene.js';
export { replayScene } from './replay-scene.js';
export type { ReplaySceneOptions, ReplayReport } from './replay-scene.js';
export type { Divergence } from './replay-driver.js';
export { definitionHash } from './definition-hash.js';
export type { SceneRecipe } from '../bus/event-data.js';
export { resumeAgent } from './resume-agent.js';
export type { ResumeAgentOptions, ResumedAgent } from './resume-agent.js';
