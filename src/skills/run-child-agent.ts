/**
 * The body of an agent skill: a child agent, made for one call, that runs on the parent's bus and
 * answers with its final text.
 */
import { makeAgent } from '../agent/create-agent.js';
import { writeAheadCheck } from '../record/write-ahead-check.js';
import { ToolError } from '../tools/tool-error.js';
import type { Args } from '../protocol/types.js';
import { childBus } from './child-bus.js';
import type { SkillFrame } from './skill-frame.js';
import type { ChildAgentOptions } from './types.js';

/** An agent skill's body, checked and frozen by `defineSkill`. */
export type ChildAgentSpec<TArgs extends Args = Args> = {
  agent: Readonly<ChildAgentOptions>;
  input: ((args: TArgs) => string) | undefined;
};

/**
 * Runs the child agent for one skill call and returns its final answer. The child is named after
 * the call (`referee/1.2.1/research` for skill `research` of call `referee/1.2.1`), so that its own
 * call ids never repeat from one skill call to the next. Its run stops with the skill call's
 * signal; it is closed afterwards whatever happened. A run that ends other than with a final
 * answer fails the skill call, naming the reason.
 */
export async function runChildAgent<TArgs extends Args>(args: TArgs, frame: SkillFrame, spec: ChildAgentSpec<TArgs>): Promise<string> {
  const { context, dispatcher, skill } = frame;
  const bus = dispatcher.bus;
  if (bus === undefined) {
    throw new ToolError(`skill "${skill}" runs a child agent, which needs a bus: dispatch it from an agent or a scene, or pass DispatchOptions.bus`);
  }
  const input = spec.input === undefined ? JSON.stringify(args) : spec.input(args);
  if (typeof input !== 'string') throw new ToolError(`skill "${skill}": input(args) must return a string, got ${typeof input}`);
  const name = childName(frame);
  const child = makeAgent(
    {
      ...spec.agent,
      name,
      bus: childBus(bus, frame.path, dispatcher.startedId),
      ...(context.scene !== undefined && { scene: context.scene }),
    },
    {
      // Per-tool limits hold across parent and child, as they do across a scene's agents.
      toolLimiters: dispatcher.toolLimiters,
      // The parent's log records the bus the child publishes on already: the child gets its check alone.
      ...(dispatcher.assertRecorded !== undefined && { log: writeAheadCheck(dispatcher.assertRecorded, '(the parent agent’s session log)') }),
      // The parent's engine, unless the skill's agent names its own.
      ...(dispatcher.engine !== undefined && { engine: dispatcher.engine }),
    },
  );
  try {
    const result = await child.run(input, { signal: context.signal, cause: dispatcher.startedId });
    if (result.reason === 'final_answer') return result.text;
    const detail = result.error === undefined ? '' : `: ${result.error}`;
    throw new ToolError(`skill "${skill}": child agent "${name}" ended with ${result.reason} after ${result.rounds} rounds${detail}`, {
      kind: result.reason === 'aborted' ? 'aborted' : 'execution',
      retryable: false,
    });
  } finally {
    await child.close();
  }
}

/** `${callId}/${skill}`, with the parent agent's name in front when the call id lacks it. */
function childName(frame: SkillFrame): string {
  const { agent } = frame.context;
  const base = frame.prefix.startsWith(`${agent}/`) ? frame.prefix : `${agent}/${frame.prefix}`;
  return `${base}/${frame.skill}`;
}
