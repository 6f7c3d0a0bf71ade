/**
 * Where one skill call runs: its dispatcher, the skills that enclose it, and the prefix of the ids
 * of what it starts. Entering a frame is where recursion and deep nesting are refused.
 */
import { ToolError } from '../tools/tool-error.js';
import type { CallDispatcher, ToolContext } from '../tools/types.js';
import { enclosingOnBus } from './child-bus.js';

/** The most skills one chain may hold, the model's call first: `a > b > c > d`. */
export const MAX_SKILL_DEPTH = 4;

/** One skill call in progress. */
export type SkillFrame = {
  /** The skill's name. */
  skill: string;
  context: ToolContext;
  dispatcher: CallDispatcher;
  /** The skills this call runs in, outermost first, this skill last. */
  path: readonly string[];
  /**
   * The base of the ids of what this call starts: its `callId`, plus `#attempt` when the skill is
   * retried, so that a retry's nested calls never reuse the ids of the failed attempt's.
   */
  prefix: string;
};

/**
 * Enters a skill call: finds its dispatcher and nesting, and refuses (with a `ToolError` that
 * fails the call) a skill already running in its own chain or a chain deeper than
 * `MAX_SKILL_DEPTH`. Either would otherwise nest without end, or wait for a per-tool slot that
 * its own caller holds.
 */
export function enterSkill(skill: string, context: ToolContext): SkillFrame {
  const dispatcher = context.dispatcher;
  if (dispatcher === undefined) {
    throw new ToolError(
      `skill "${skill}" must be run by the dispatcher (an agent, a scene or dispatchCalls): ` +
        'its context has no dispatcher (a copy of the context, such as { ...context }, does not carry it)',
    );
  }
  const enclosing = dispatcher.enclosing ?? enclosingOnBus(dispatcher.bus) ?? [];
  const path = Object.freeze([...enclosing, skill]);
  if (enclosing.includes(skill)) {
    throw new ToolError(`skill "${skill}" is already running in this chain (${path.join(' > ')}); a skill may not call itself`);
  }
  if (path.length > MAX_SKILL_DEPTH) {
    throw new ToolError(`skills nest at most ${MAX_SKILL_DEPTH} deep, and "${skill}" would be number ${path.length}: ${path.join(' > ')}`);
  }
  const prefix = context.attempt > 1 ? `${context.callId}#${context.attempt}` : context.callId;
  return { skill, context, dispatcher, path, prefix };
}

/** Refuses a step that would call a skill already running in the chain, before it waits for anything. */
export function refuseRecursion(frame: SkillFrame, tool: string): void {
  if (!frame.path.includes(tool)) return;
  throw new ToolError(
    `skill "${frame.skill}" cannot call "${tool}": it is already running in this chain ` +
      `(${[...frame.path, tool].join(' > ')}); a skill may not call itself`,
  );
}
