/**
 * The declarative workflow: `steps: [{ tool, args }]` run in order, each step's output handed to
 * the next one's `args`, the last output the skill's.
 */
import { ToolSchemaError } from '../errors.js';
import type { Args } from '../protocol/types.js';
import type { Registry } from '../tools/registry.js';
import { suggestName } from '../tools/suggest-name.js';
import type { StepSpec, Steps } from './types.js';

/**
 * Checks declared steps when the skill is defined: a non-empty list, each naming one of the
 * skill's tools, with arguments that are an object or a function. Returns a frozen copy.
 */
export function checkDeclaredSteps<TArgs extends Args>(skill: string, steps: unknown, registry: Registry): readonly StepSpec<TArgs>[] {
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new ToolSchemaError(skill, 'steps must be a non-empty array of { tool, args? }');
  }
  const names = registry.names();
  return Object.freeze(
    steps.map((step: unknown, index) => {
      if (typeof step !== 'object' || step === null) throw new ToolSchemaError(skill, `steps[${index}] must be an object { tool, args? }`);
      const { tool, args } = step as { tool?: unknown; args?: unknown };
      if (typeof tool !== 'string' || registry.get(tool) === undefined) {
        const near = typeof tool === 'string' ? suggestName(tool, names) : undefined;
        throw new ToolSchemaError(
          skill,
          `steps[${index}].tool ${JSON.stringify(tool)} is not one of the skill's tools` +
            `${near === undefined ? '' : ` (did you mean "${near}"?)`}; tools: ${names.join(', ') || '(none)'}`,
        );
      }
      const argsOk = args === undefined || typeof args === 'function' || (typeof args === 'object' && args !== null && !Array.isArray(args));
      if (!argsOk) throw new ToolSchemaError(skill, `steps[${index}].args must be an object or a function (input, previous, outputs) => object`);
      return Object.freeze({ ...(step as StepSpec<TArgs>) });
    }),
  );
}

/** Runs declared steps one after the other; a failing step throws, and no later step runs. */
export async function runDeclaredSteps<TArgs extends Args>(input: TArgs, steps: Steps, declared: readonly StepSpec<TArgs>[]): Promise<unknown> {
  const outputs: unknown[] = [];
  let previous: unknown;
  for (const step of declared) {
    const args = typeof step.args === 'function' ? step.args(input, previous, outputs) : (step.args ?? {});
    previous = await steps.call(step.tool, args);
    outputs.push(previous);
  }
  return previous;
}
