import type { Agent } from '../agent/agent-options.js';
import { stableKey } from '../agent/stable-key.js';
import { safeJson, type Redactor } from '../bus/safe-json.js';
import { failure, success, type Outcome } from '../outcome.js';
import type { Scene } from '../scene/types.js';
import type { ControlCommand } from './inspector-options.js';
import type { TickGate } from './tick-gate.js';

/** A refused command: the HTTP status and the message for the page. */
export type ControlProblem = { status: 400 | 404 | 409; error: string };

/** What commands act on. */
export type ControlTarget = {
  mode: 'live' | 'log';
  scene: Scene | undefined;
  agents: ReadonlyMap<string, Agent>;
  gate: TickGate | undefined;
  /**
   * How the page was shown events: the args it sends back are compared as it saw them, and a
   * request past `maxEventChars` reached it as a `$truncated` card (no args, no output).
   */
  stream?: { readonly redactor: Redactor; readonly maxEventChars?: number };
};

const TYPES = ['approve', 'deny', 'approveResult', 'rejectResult', 'pause', 'resume', 'step'] as const;
const MAX_NAME = 256;
const MAX_REASON = 2_000;
const HASH = /^[0-9a-f]{64}$/;
// Room for the envelope's own fields (id, type, at, agent, scene, cause) beside `data` on the
// wire; generous, so that a card the page got truncated is never taken for a whole one.
const ENVELOPE_ROOM = 2_048;

/** Checks a request body as a command; the problem names the field and what it allows. */
export function parseControlCommand(body: unknown): Outcome<ControlCommand, ControlProblem> {
  const bad = (error: string) => failure<ControlProblem>({ status: 400, error });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('the body must be a JSON object with a "type"');
  const fields = body as Record<string, unknown>;
  const type = fields.type;
  if (!TYPES.includes(type as (typeof TYPES)[number])) return bad(`"type" must be one of ${TYPES.join(', ')}; got ${JSON.stringify(type) ?? 'nothing'}`);
  if (type === 'pause' || type === 'resume' || type === 'step') return success({ type });
  for (const name of ['agent', 'callId'] as const) {
    const value = fields[name];
    if (typeof value !== 'string' || value === '' || value.length > MAX_NAME) return bad(`"${name}" must be a non-empty string of at most ${MAX_NAME} characters`);
  }
  const agent = fields.agent as string;
  const callId = fields.callId as string;
  if (type === 'approveResult' || type === 'approve') {
    const hashName = type === 'approve' ? 'argsHash' : 'outputHash';
    const hash = fields[hashName];
    if (hash !== undefined && (typeof hash !== 'string' || !HASH.test(hash))) return bad(`"${hashName}" must be the 64 lower-case hex digits of the request's ${hashName}`);
    const bound = hash === undefined ? {} : { [hashName]: hash };
    if (type === 'approveResult') return success({ type, agent, callId, ...bound });
    const args = fields.args;
    if (args === undefined) return success({ type, agent, callId, ...bound });
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return bad('"args" must be the JSON object of arguments the approver saw');
    return success({ type, agent, callId, ...bound, args: args as Record<string, unknown> });
  }
  const refusal = type as 'deny' | 'rejectResult';
  const reason = fields.reason;
  if (reason === undefined) return success({ type: refusal, agent, callId });
  if (typeof reason !== 'string' || reason.length > MAX_REASON) return bad(`"reason" must be a string of at most ${MAX_REASON} characters`);
  return success({ type: refusal, agent, callId, reason });
}

/**
 * Carries out a command. Approve and deny go to the agent's own `approve`/`deny` (which check the
 * call is still waiting), approveResult and rejectResult to `approveResult`/`rejectResult` (which
 * check the result is still held); pause, resume and step turn the tick gate of a stepped scene.
 */
export function runControlCommand(command: ControlCommand, target: ControlTarget): Outcome<void, ControlProblem> {
  if (target.mode === 'log') return failure({ status: 409, error: 'this is a session log: nothing to control' });
  switch (command.type) {
    case 'approve':
    case 'deny': {
      const agent = target.scene?.agents.get(command.agent)?.agent ?? target.agents.get(command.agent);
      if (agent === undefined) return failure({ status: 404, error: `no agent named ${JSON.stringify(command.agent)}` });
      if (command.type === 'approve' && command.args === undefined && command.argsHash === undefined) {
        const pending = agent.pendingApprovals().find((approval) => approval.callId === command.callId);
        if (pending !== undefined && shownTruncated(pending, target)) return unboundRefusal(command.callId, 'arguments', 'argsHash');
      }
      const done =
        command.type === 'approve'
          ? agent.approve(command.callId, {
              ...(command.args === undefined ? {} : { args: argsAsApproved(agent, command.callId, command.args, target.stream?.redactor) }),
              ...(command.argsHash === undefined ? {} : { argsHash: command.argsHash }),
            })
          : agent.deny(command.callId, command.reason);
      if (done) return success(undefined);
      return failure({
        status: 409,
        error: `no call ${JSON.stringify(command.callId)} of ${command.agent} is waiting for approval with those arguments (already decided, aborted, never asked, or asked with other arguments)`,
      });
    }
    case 'approveResult':
    case 'rejectResult': {
      const agent = target.scene?.agents.get(command.agent)?.agent ?? target.agents.get(command.agent);
      if (agent === undefined) return failure({ status: 404, error: `no agent named ${JSON.stringify(command.agent)}` });
      if (command.type === 'approveResult' && command.outputHash === undefined) {
        const pending = agent.pendingResultApprovals().find((approval) => approval.callId === command.callId);
        if (pending !== undefined && shownTruncated(pending, target)) return unboundRefusal(command.callId, 'output', 'outputHash');
      }
      const done =
        command.type === 'approveResult'
          ? agent.approveResult(command.callId, command.outputHash === undefined ? {} : { outputHash: command.outputHash })
          : agent.rejectResult(command.callId, command.reason);
      if (done) return success(undefined);
      return failure({
        status: 409,
        error: `no result of call ${JSON.stringify(command.callId)} of ${command.agent} is waiting for approval (already decided, aborted, or never held)`,
      });
    }
    default:
      return turnGate(command.type, target);
  }
}

/**
 * The page saw the call's arguments redacted (secret-looking keys, env secrets): when they match
 * the pending call's arguments redacted the same way, the approval binds to the call's own.
 */
function argsAsApproved(agent: Agent, callId: string, shown: Record<string, unknown>, redactor: Redactor | undefined): Record<string, unknown> {
  if (redactor === undefined) return shown;
  const pending = agent.pendingApprovals().find((approval) => approval.callId === callId);
  if (pending === undefined) return shown;
  const seen = JSON.parse(safeJson(pending.args, { redactor }).text) as unknown;
  return stableKey(seen) === stableKey(shown) ? pending.args : shown;
}

/**
 * Whether the request reached the page as a `$truncated` card: then the person never saw what
 * they would approve, and only the request's hash binds the approval to it.
 */
function shownTruncated(request: object, target: ControlTarget): boolean {
  const stream = target.stream;
  if (stream?.maxEventChars === undefined) return false;
  const room = stream.maxEventChars - ENVELOPE_ROOM;
  return safeJson(request, { redactor: stream.redactor, maxChars: room + 1 }).text.length > room;
}

function unboundRefusal(callId: string, what: string, hashName: string): Outcome<void, ControlProblem> {
  return failure({
    status: 409,
    error: `the approval request of call ${JSON.stringify(callId)} was too large to show on the page (its ${what} reached it as a $truncated card): send the request's "${hashName}" with the approval, so it binds to what was asked`,
  });
}

function turnGate(type: 'pause' | 'resume' | 'step', target: ControlTarget): Outcome<void, ControlProblem> {
  const { scene, gate } = target;
  if (scene === undefined || gate === undefined) {
    return failure({ status: 409, error: `${type} needs a scene run under the inspector's tick gate (troupe run --inspect)` });
  }
  if (scene.clockMode !== 'stepped') return failure({ status: 409, error: `${type} works for stepped scenes; this one runs on a ${scene.clockMode} clock` });
  if (scene.stopped) return failure({ status: 409, error: `the scene has stopped at tick ${scene.tick}` });
  // Pausing a paused scene, or resuming a running one, is already done: not an error.
  if (type === 'pause') gate.pause();
  else if (type === 'resume') gate.resume();
  else if (!gate.step()) return failure({ status: 409, error: 'step works while paused: pause first' });
  return success(undefined);
}
