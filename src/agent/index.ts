export { createAgent } from './create-agent.js';
export type { Agent, AgentOptions, PendingApproval, RunResult } from './agent-options.js';
export { observationText, quote } from './observation-text.js';
