/** The inspector, to embed in your own process: `import { startInspector } from 'troupe/inspect'`. */
export { startInspector } from './start-inspector.js';
export type { ControlCommand, Inspector, InspectorNotice, InspectorOptions, InspectorState } from './start-inspector.js';
export { createEventHistory } from './event-history.js';
export type { EventHistory, EventHistoryOptions, HistorySlice } from './event-history.js';
export type { AgentSummary } from './agent-tally.js';
export { createTickGate } from './tick-gate.js';
export type { GatedScene, TickGate } from './tick-gate.js';
