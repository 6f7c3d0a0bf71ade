import { scriptedResponse, type ScriptedReply } from '../llm/scripted-provider.js';
import type { ModelRequest, ModelResponse, Provider } from '../llm/types.js';
import { ProviderError } from '../llm/provider-error.js';
import { requestAborted } from '../llm/request-signal.js';
import type { Brain, Perception } from './types.js';
import { errorMessage } from '../errors.js';

/**
 * A scripted brain as a provider: each deliberation asks the brain for its turn, given what the
 * agent perceives now, and hands the text (or native calls) to the same parse → validate →
 * dispatch cycle a model's output goes through. Nothing is recorded per call, so a brain can
 * drive an agent for a hundred thousand turns in constant memory.
 */
export function brainProvider(brain: Brain, perceive: (request: ModelRequest) => Perception, name = 'brain'): Provider {
  const completeNow = (request: ModelRequest): ModelResponse | Promise<ModelResponse> => {
    if (requestAborted(request)) throw new ProviderError('aborted', 'the brain was asked after an abort');
    let turn: ReturnType<Brain>;
    try {
      turn = brain(perceive(request));
    } catch (error) {
      throw error instanceof ProviderError ? error : new ProviderError('script', `brain of "${request.agent}" threw: ${errorMessage(error)}`, { cause: error });
    }
    // No closure over the request: one object less held for every agent waiting on its brain.
    return turn instanceof Promise ? turn.then(responseTo) : responseTo(turn);
  };
  return {
    name,
    model: 'scripted-brain',
    pure: true,
    // A brain is a function: it spends no tokens, and its replies are not estimated.
    spendsTokens: false,
    completeNow,
    complete(request: ModelRequest): Promise<ModelResponse> {
      try {
        const answer = completeNow(request);
        return answer instanceof Promise ? answer : Promise.resolve(answer);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

const PASSED: ModelResponse = Object.freeze({ text: '', finishReason: 'stop', passed: true });

/** A brain's turn as a response (its usage is not estimated); `null` or `undefined` is a pass. */
function responseTo(turn: ScriptedReply | null | undefined): ModelResponse {
  return turn === null || turn === undefined ? PASSED : scriptedResponse(turn, undefined);
}
