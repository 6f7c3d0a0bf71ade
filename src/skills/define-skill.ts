/**
 * `defineSkill`: a tool whose body is a workflow (steps through the dispatcher) or a child agent.
 * What it returns is an ordinary `Tool`: validated by AJV, listed in the manifest, dispatched like
 * any other, its events ordinary `tool.*` events.
 */
import { resolveConfig } from '../agent/resolve-config.js';
import { ToolSchemaError } from '../errors.js';
import type { Args } from '../protocol/types.js';
import { nameProblem } from '../tools/check-tool-schema.js';
import { defineTool } from '../tools/define-tool.js';
import { createRegistry } from '../tools/registry.js';
import { markSkill } from '../tools/skill-mark.js';
import { suggestName } from '../tools/suggest-name.js';
import type { ArgsOf, Tool, ToolContext, ToolDefinition, ToolParameters } from '../tools/types.js';
import { checkDeclaredSteps, runDeclaredSteps } from './declared-steps.js';
import { runChildAgent, type ChildAgentSpec } from './run-child-agent.js';
import { enterSkill } from './skill-frame.js';
import type { AgentSkillDefinition, ChildAgentOptions, SkillDefinition, StepsSkillDefinition, WorkflowSkillDefinition } from './types.js';
import { createSteps } from './workflow-steps.js';

const TOOL_OPTIONS = [
  'name', 'description', 'parameters', 'readOnly', 'timeoutMs', 'retry', 'idempotent',
  'needsApproval', 'verbatimParams', 'concurrency',
];
const BODY_OPTIONS = ['tools', 'run', 'steps', 'agent', 'input'];
const OPTION_NAMES = [...TOOL_OPTIONS, ...BODY_OPTIONS];

/**
 * Defines a skill: a tool whose body is a workflow of tool calls or a child agent.
 *
 * - `run` with `tools`: code that calls the skill's tools through `steps.call(name, args)`; each
 *   call is a nested call with id `${callId}/${n}`, validated against its tool's schema and run by
 *   the dispatcher that runs the skill (its per-tool limiters, log, timeouts and retries, under the
 *   skill's signal), but never through the global limiter whose slot the skill holds.
 * - `steps` with `tools`: the same as a fixed list, `[{ tool, args: (input, previous) => ({…}) }]`.
 * - `agent`: a child agent with its own tools, run on the parent's bus on `input(args)`; its final
 *   answer is the output, and any other ending fails the call.
 *
 * Skills nest at most `MAX_SKILL_DEPTH` (4) deep and never inside themselves. Throws
 * `ToolSchemaError` (or the agent's `ConfigError`) at once for a definition that cannot work.
 *
 * @example
 * const scout = defineSkill({
 *   name: 'scout_player',
 *   description: 'Look a player up, then list their team.',
 *   parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
 *   tools: [lookupPlayer, listTeam],
 *   run: async ({ id }, steps) => {
 *     const player = await steps.call<{ team: string }>('lookup_player', { id });
 *     return steps.call('list_team', { team: player.team });
 *   },
 * });
 * const agent = createAgent({ name: 'referee', tools: [scout], provider, concurrency: 1 });
 */
export function defineSkill<const TParameters extends ToolParameters, TOutput = unknown>(
  definition: WorkflowSkillDefinition<TParameters, TOutput>,
): Tool<ArgsOf<TParameters>, TOutput>;
export function defineSkill<const TParameters extends ToolParameters>(definition: StepsSkillDefinition<TParameters>): Tool<ArgsOf<TParameters>, unknown>;
export function defineSkill<const TParameters extends ToolParameters>(definition: AgentSkillDefinition<TParameters>): Tool<ArgsOf<TParameters>, string>;
export function defineSkill(definition: SkillDefinition): Tool {
  if (typeof definition !== 'object' || definition === null) {
    throw new ToolSchemaError('(unnamed)', 'defineSkill needs an object with name, description, parameters and one of run, steps or agent');
  }
  const rawName = (definition as { name?: unknown }).name;
  const problem = nameProblem(rawName);
  if (problem !== undefined) throw new ToolSchemaError(typeof rawName === 'string' ? rawName : '(unnamed)', `skill name ${JSON.stringify(rawName)}: ${problem}`);
  const name = rawName as string;
  const fail = (message: string): never => {
    throw new ToolSchemaError(name, message);
  };
  for (const key of Object.keys(definition)) {
    if (OPTION_NAMES.includes(key)) continue;
    if (key === 'execute') fail('a skill has no execute: its body is run, steps or agent (defineTool makes a plain tool)');
    const near = suggestName(key, OPTION_NAMES);
    fail(`unknown option "${key}"${near === undefined ? '' : `; did you mean "${near}"?`} Options: ${OPTION_NAMES.slice(1).join(', ')}`);
  }

  const options = definition as Partial<Record<string, unknown>>;
  const bodies = ['run', 'steps', 'agent'].filter((key) => options[key] !== undefined);
  if (bodies.length !== 1) {
    fail(`a skill needs exactly one body: run (code), steps (a list) or agent (a child agent); got ${bodies.join(' and ') || 'none'}`);
  }
  const execute = bodies[0] === 'agent' ? agentBody(name, options, fail) : workflowBody(name, options, fail);
  const toolOptions: Record<string, unknown> = { execute };
  for (const key of TOOL_OPTIONS) if (Object.hasOwn(options, key)) toolOptions[key] = options[key];
  // Marked, so the manifest lists it with the skills rather than the plain tools.
  return markSkill(defineTool(toolOptions as ToolDefinition));
}

type Execute = (args: Args, context: ToolContext) => Promise<unknown>;

function workflowBody(name: string, options: Partial<Record<string, unknown>>, fail: (message: string) => never): Execute {
  if (options['input'] !== undefined) fail('input is for agent skills; a workflow reads its arguments in run or steps');
  const tools = options['tools'];
  if (!Array.isArray(tools)) return fail('a workflow skill needs tools: the tools its steps may call');
  // Checked and frozen now: later edits of the host's array cannot change what the steps reach.
  const registry = createRegistry(tools as Tool[]);
  const run = options['run'];
  if (run !== undefined) {
    if (typeof run !== 'function') fail(`run must be a function (args, steps) => result, got ${typeof run}`);
    const body = run as WorkflowSkillDefinition['run'];
    return async (args, context) => body(args, createSteps(enterSkill(name, context), registry));
  }
  const declared = checkDeclaredSteps<Args>(name, options['steps'], registry);
  return async (args, context) => runDeclaredSteps(args, createSteps(enterSkill(name, context), registry), declared);
}

function agentBody(name: string, options: Partial<Record<string, unknown>>, fail: (message: string) => never): Execute {
  if (options['tools'] !== undefined) fail('an agent skill gives its tools to the child: agent: { tools }');
  const agent = options['agent'];
  const input = options['input'];
  if (typeof agent !== 'object' || agent === null) return fail('agent must be the child agent’s options: { instructions, tools, provider, … }');
  if (input !== undefined && typeof input !== 'function') fail(`input must be a function (args) => string, got ${typeof input}`);
  const child = agent as ChildAgentOptions;
  for (const key of ['name', 'bus', 'scene', 'limiter', 'log']) {
    if (Object.hasOwn(child, key)) fail(`agent.${key} is set by the skill (the child runs under the calling agent); leave it out`);
  }
  // One frozen tool list for every call: the agent caches its registry and manifest per list.
  const spec: ChildAgentSpec = {
    agent: Object.freeze({ ...child, tools: Object.freeze([...(child.tools ?? [])]) }),
    input: input as ChildAgentSpec['input'],
  };
  // The child's options are checked now, as createAgent would check them, not at the first call.
  resolveConfig({ ...spec.agent, name });
  return async (args, context) => runChildAgent(args, enterSkill(name, context), spec);
}
