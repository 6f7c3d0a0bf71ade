/**
 * troupe agents in XState v5 systems: `agentLogic` makes an agent an actor a parent machine can
 * spawn or invoke, and `inspectAgent` reports an agent to an XState inspector.
 */
export { agentLogic } from './agent-logic.js';
export type { AgentActorContext, AgentActorEvent, AgentActorInput, AgentActorLogic, AgentActorRef, AgentActorSnapshot, AgentLogicOptions } from './agent-logic.js';
export { inspectAgent } from './inspect-agent.js';
