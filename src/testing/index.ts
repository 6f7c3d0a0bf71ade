/** Helpers for testing agents and scenes: `import { testAgent } from 'troupe/testing'`. */
export { testAgent } from './test-agent.js';
export { recordEvents } from './record-events.js';
export type { EventRecord } from './record-events.js';
export { deferred } from './deferred.js';
export type { Deferred } from './deferred.js';
export { scriptedProvider } from '../llm/scripted-provider.js';
export type { ScriptedProvider, ScriptedReply, ScriptFunction } from '../llm/scripted-provider.js';
export { sequentialIds, steppedClock } from '../bus/ids.js';
export { cassetteProvider, recordProvider } from '../llm/cassette.js';
export type { CassetteEntry, CassetteProvider, RecordOptions } from '../llm/cassette.js';
