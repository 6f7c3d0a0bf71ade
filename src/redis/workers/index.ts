/**
 * A scene across worker processes on Redis: a coordinator keeps the clock and hands out turns,
 * workers run them. See docs/distributed-workers.md.
 */
export { openCoordinator } from './coordinator.js';
export type { Coordinator, CoordinatorOptions } from './coordinator.js';
export { runWorker } from './worker.js';
export type { WorkerOptions, WorkerResult } from './worker.js';
export { partitionOf, ownerOf } from './partition.js';
export type { PartReport } from './keys.js';
export type { RunRecord } from './run-record.js';
export { buildWithHooks } from '../../scene/scene-hooks.js';
