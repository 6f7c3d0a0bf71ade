import { agentStepper } from './agent-stepper.js';
import type { SharedParts } from './agent-config.js';
import type { Agent, AgentOptions } from './agent-options.js';
import { AgentRuntime } from './agent-runtime.js';
import type { OutputOf, OutputSchema } from './output-schema.js';
import { resolveConfig } from './resolve-config.js';
import { xstateStepper } from './xstate-engine.js';

/**
 * Creates an agent: an XState statechart, stepped for speed by a table compiled from it (or by
 * XState's interpreter, with `engine: 'xstate'`), that
 * cycles deliberate → parse → validate → dispatch → observe over its tools, publishing every step
 * on its bus. Throws a ConfigError for options that cannot work; never for what the model does.
 *
 * @example
 * const agent = createAgent({ name: 'referee', tools: [lookupPlayer], provider });
 * agent.bus.on('tool.completed', (event) => console.log(event.data.output));
 * const result = await agent.run('Who is player 7?');
 *
 * With an `output` schema the final answer is validated JSON, and `result.output` is typed by it:
 * @example
 * const judge = createAgent({ name: 'judge', provider, output: z.object({ winner: z.string() }) });
 * const { output } = await judge.run('Who won?'); // output: { winner: string } | undefined
 */
export function createAgent<const TOutput extends OutputSchema | undefined = undefined>(options: AgentOptions & { output?: TOutput }): Agent<OutputOf<TOutput>> {
  return makeAgent(options) as Agent<OutputOf<TOutput>>;
}

/**
 * Makes an agent from its options plus what a scene or a parent agent shares with it: the one
 * place agents are built (`createAgent`, a scene's cast, a skill's child agent).
 */
export function makeAgent(options: AgentOptions, shared?: SharedParts): AgentRuntime {
  const config = resolveConfig(options, shared);
  // Chosen once, here: a compiled agent's steps are the same code whether or not the other engine exists.
  const stepper = config.engine === 'xstate' ? xstateStepper({ id: config.name, inspect: config.inspect }) : agentStepper;
  return new AgentRuntime(config, stepper);
}
