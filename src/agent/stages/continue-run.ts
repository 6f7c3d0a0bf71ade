import type { AgentStateName } from '../../../machines/agent.machine.js';
import type { AgentConfig } from '../agent-config.js';
import type { RunState } from '../run/run-state.js';
import { CALL_GATE, RESULT_GATE, reopenGate } from './approval-gate.js';
import { prepareRequest, sendRequest } from './deliberate.js';
import { callsToRun, runCalls } from './dispatch.js';
import { repair } from './repair.js';
import type { StagePort } from './stage-port.js';

/**
 * Takes up the work of a run restored in `state`, as the state's entry left it: the model asked
 * (again, as it was asked), the repair tried, the gates reopened, the calls without a result run.
 * What the entry had already done (the round opened, `llm.request` published, calls accepted) is
 * in the run's state and is not done twice.
 */
export function continueRun(state: AgentStateName, run: RunState, config: AgentConfig, port: StagePort, requestAgain: boolean): void {
  switch (state) {
    case 'deliberating':
      return run.askedAt === undefined ? prepareRequest(run, config, port) : sendRequest(run, config, port);
    case 'repairing':
      return repair(run, config, port);
    case 'awaitingApproval':
      return reopenGate(CALL_GATE, run, config, port, requestAgain);
    case 'dispatching': {
      const runnable = callsToRun(run);
      return runnable.length === 0 ? port.send('dispatch.settled') : runCalls(run, config, port, runnable);
    }
    case 'awaitingResultApproval':
      return reopenGate(RESULT_GATE, run, config, port, requestAgain);
    default:
      return undefined;
  }
}
