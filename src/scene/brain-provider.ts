import { scriptedResponse } from '../llm/scripted-provider.js';
import type { ModelRequest, ModelResponse, Provider } from '../llm/types.js';
import { ProviderError } from '../llm/provider-error.js';
import type { Brain, Perception } from './types.js';

/**
 * A scripted brain as a provider: each deliberation asks the brain for its turn, given what the
 * agent perceives now, and hands the text (or native calls) to the same parse → validate →
 * dispatch cycle a model's output goes through. Nothing is recorded per call, so a brain can
 * drive an agent for a hundred thousand turns in constant memory.
 */
export function brainProvider(brain: Brain, perceive: (request: ModelRequest) => Perception, name = 'brain'): Provider {
  return {
    name,
    model: 'scripted-brain',
    complete(request: ModelRequest): Promise<ModelResponse> {
      if (request.signal.aborted) return Promise.reject(new ProviderError('aborted', 'the brain was asked after an abort'));
      try {
        const turn = brain(perceive(request));
        if (turn instanceof Promise) return turn.then((value) => scriptedResponse(value, request, false));
        return Promise.resolve(scriptedResponse(turn, request, false));
      } catch (error) {
        return Promise.reject(
          error instanceof ProviderError ? error : new ProviderError('script', `brain of "${request.agent}" threw: ${describe(error)}`, { cause: error }),
        );
      }
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
