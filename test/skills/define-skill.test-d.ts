import { expectTypeOf, test } from 'vitest';
import { defineSkill, defineTool, scriptedProvider, type StepResult, type Tool } from '../../src/index.js';

const lookup = defineTool({ name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: {} }, execute: () => 1 });
const parameters = { type: 'object', properties: {} } as const;

test('each body gives a Tool with the output it produces', () => {
  const workflow = defineSkill({
    name: 'workflow',
    description: 'A workflow.',
    parameters,
    tools: [lookup],
    run: async (_args, steps) => {
      expectTypeOf(await steps.call<number>('lookup')).toEqualTypeOf<number>();
      expectTypeOf(await steps.tryCall('lookup')).toEqualTypeOf<StepResult>();
      return { found: true };
    },
  });
  expectTypeOf(workflow).toEqualTypeOf<Tool<{}, { found: boolean }>>();

  const child = defineSkill({ name: 'child', description: 'A child agent.', parameters, agent: { provider: scriptedProvider([]) } });
  expectTypeOf(child).toEqualTypeOf<Tool<{}, string>>();

  const declared = defineSkill({ name: 'declared', description: 'Declared steps.', parameters, tools: [lookup], steps: [{ tool: 'lookup' }] });
  expectTypeOf(declared.kind).toEqualTypeOf<'tool'>();
});

test('a step result narrows on its status', () => {
  const result = {} as StepResult;
  if (result.status === 'completed') expectTypeOf(result.output).toBeUnknown();
  if (result.status === 'failed') expectTypeOf(result.error.kind).toEqualTypeOf<'execution' | 'timeout' | 'network' | 'rate_limit' | 'permission' | 'not_found' | 'aborted' | 'unknown'>();
  // @ts-expect-error: only a rejected step has issues
  if (result.status === 'failed') void result.issues;
});

test('the child agent’s name, bus and limiter are the skill’s to set', () => {
  // @ts-expect-error: the skill names the child
  defineSkill({ name: 'child', description: 'A child agent.', parameters, agent: { name: 'x', provider: scriptedProvider([]) } });
});
