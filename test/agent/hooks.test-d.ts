import { expectTypeOf, test } from 'vitest';
import { createAgent, defineTool, repairWithModel, scriptedProvider, type LooseArgs, type RepairContext, type RepairFunction } from '../../src/index.js';

test('tool hooks are typed by the tool', () => {
  defineTool({
    name: 't',
    description: 'd',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    prepareArguments: (args, context) => {
      expectTypeOf(args).toEqualTypeOf<LooseArgs>();
      expectTypeOf(context.format).toEqualTypeOf<'xml' | 'native'>();
      return { id: String(args.legacy) };
    },
    needsResultApproval: (output, args) => {
      expectTypeOf(output).toEqualTypeOf<{ secret: boolean }>();
      expectTypeOf(args).toEqualTypeOf<{ id: string }>();
      return output.secret;
    },
    execute: (): { secret: boolean } => ({ secret: true }),
  });
  defineTool({
    name: 't',
    description: 'd',
    parameters: { type: 'object' },
    // @ts-expect-error: prepareArguments is synchronous
    prepareArguments: async (args: LooseArgs) => args,
    execute: () => 1,
  });
});

test('agent hooks take what the docs say', () => {
  const provider = scriptedProvider([]);
  createAgent({ name: 'a', provider, onBeforeModel: async (messages) => messages.slice(-3) });
  createAgent({ name: 'a', provider, repair: repairWithModel({ maxTokens: 200 }) });
  const repair: RepairFunction = (rejection, context) => {
    expectTypeOf(context).toEqualTypeOf<RepairContext>();
    return rejection.suggestion === undefined ? undefined : { name: rejection.suggestion, args: context.call.args };
  };
  createAgent({ name: 'a', provider, repair });
  // @ts-expect-error: a repair returns a call, not a string
  createAgent({ name: 'a', provider, repair: () => 'fixed' });
  const agent = createAgent({ name: 'a', provider });
  expectTypeOf(agent.approveResult).toEqualTypeOf<(callId: string, options?: { outputHash?: string }) => boolean>();
  expectTypeOf(agent.pendingResultApprovals()[0]!.output).toEqualTypeOf<unknown>();
});
