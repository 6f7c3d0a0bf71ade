import type { Bus, Unsubscribe } from '../bus/bus.js';
import type { Scene } from '../scene/types.js';

/**
 * How `troupe run` answers tool calls (and held results) that need approval: `ask` leaves them to
 * the inspector's page (or the scene's own code); `all` approves each at once; `none` denies each
 * at once, saying why. Without `--inspect` nobody could answer, and a turn waiting for an answer
 * would hold its tick forever: `none` is the default then, `ask` with `--inspect`.
 */
export type ApprovalPolicy = 'ask' | 'all' | 'none';

/** The reason a denied call or withheld result is given under `--approve none`. */
export const NO_APPROVER = 'no one is here to approve it (troupe run without --inspect denies; --approve all allows)';

/**
 * Answers every approval request of the scene's agents on `bus` as `policy` says, as it is
 * published (an answer from the request's own handler is taken once the request is out, so the
 * events stay in order and a seeded run stays the same). Requests of agents outside the scene
 * (a skill's child) are left alone. Returns the unsubscribe.
 */
export function answerApprovals(scene: Scene, bus: Bus, policy: Exclude<ApprovalPolicy, 'ask'>): Unsubscribe {
  const agentOf = (name: string | undefined) => (name === undefined ? undefined : scene.agents.get(name)?.agent);
  const stopCalls = bus.on('tool.approval.requested', (event) => {
    const agent = agentOf(event.agent);
    if (agent === undefined) return;
    if (policy === 'all') agent.approve(event.data.callId, { argsHash: event.data.argsHash });
    else agent.deny(event.data.callId, NO_APPROVER);
  });
  const stopResults = bus.on('tool.result.approval.requested', (event) => {
    const agent = agentOf(event.agent);
    if (agent === undefined) return;
    if (policy === 'all') agent.approveResult(event.data.callId, { outputHash: event.data.outputHash });
    else agent.rejectResult(event.data.callId, NO_APPROVER);
  });
  return () => {
    stopCalls();
    stopResults();
  };
}
