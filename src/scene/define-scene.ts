import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import { ConfigError } from '../errors.js';
import type { SessionLog } from '../record/session-log.js';
import type { Tool } from '../tools/types.js';
import type { Scene, SceneModel, SceneOptions, SceneResult } from './types.js';

/** A scene-specific command-line option (`troupe run crowd --npcs 1000`). */
export type SceneOptionSpec =
  | { type: 'number'; default: number; description: string; min?: number; max?: number; integer?: boolean }
  | { type: 'string'; default: string; description: string; choices?: readonly string[] }
  | { type: 'boolean'; default: boolean; description: string };

/** The values of a scene's options, after parsing and defaults. */
export type SceneOptionValues = Record<string, number | string | boolean>;

/** What `create` gets from whoever runs the scene (`troupe run`, a test, a host). */
export type SceneContext = {
  /** A bus to build the scene on; usually absent, so that a stepped scene uses simulated time. */
  bus?: Bus;
  /** Forward to `createScene`: the runner subscribes to the scene's bus before any event. */
  observe?: (bus: Bus) => void;
  seed: number;
  logger?: Logger;
  log?: SessionLog;
  /** A real model chosen by the runner (`--model`): members with instructions use it. */
  model?: SceneModel;
  /** Tools the runner gives every member (`--mcp`): pass them to `createScene`'s `tools`. */
  tools?: readonly Tool[];
  options: SceneOptionValues;
};

/**
 * A runnable scene: what a folder of `scenes/` exports as `scene` for `troupe run` to load.
 *
 * @example
 * export const scene = defineScene({
 *   description: 'Two traders haggle over one shared inventory.',
 *   ticks: 20,
 *   create: ({ seed, bus }) => buildMarket({ seed, bus }),
 * });
 */
export type SceneDefinition = {
  /** One line for `troupe list`. */
  description: string;
  /** Ticks when `--ticks` is not given. */
  ticks: number;
  options?: Record<string, SceneOptionSpec>;
  /** Builds the scene, not yet started. */
  create(context: SceneContext): Scene | Promise<Scene>;
  /** The line printed when the run ends (default: reason, ticks and turns). */
  summarize?(scene: Scene, result: SceneResult): string;
};

/** Checks a scene definition and returns it (typed); throws a ConfigError naming what is wrong. */
export function defineScene(definition: SceneDefinition): SceneDefinition {
  if (definition === null || typeof definition !== 'object') throw new ConfigError('defineScene(definition) takes an object');
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    throw new ConfigError('defineScene: `description` must be a non-empty string');
  }
  if (!Number.isSafeInteger(definition.ticks) || definition.ticks < 1) {
    throw new ConfigError(`defineScene: \`ticks\` must be a positive integer, got ${String(definition.ticks)}`);
  }
  if (typeof definition.create !== 'function') throw new ConfigError('defineScene: `create` must be a function');
  for (const [name, spec] of Object.entries(definition.options ?? {})) {
    if (!/^[a-z][a-z0-9-]*$/.test(name) || RESERVED.has(name)) {
      throw new ConfigError(`defineScene: option "${name}" must be lower-case letters, digits and dashes, and not ${[...RESERVED].join(', ')}`);
    }
    if (!['number', 'string', 'boolean'].includes(spec.type)) {
      throw new ConfigError(`defineScene: option "${name}" has type ${JSON.stringify(spec.type)}; the types are 'number' (with integer: true for whole numbers), 'string' and 'boolean'`);
    }
    if (typeof spec.default !== spec.type) {
      throw new ConfigError(`defineScene: option "${name}" is a ${spec.type}, but its default is ${typeof spec.default}`);
    }
  }
  return definition;
}

/** Flags of `troupe run` itself; a scene option cannot take these names. */
const RESERVED = new Set(['ticks', 'seed', 'log', 'quiet', 'json', 'help', 'model', 'protocol', 'inspect', 'port', 'mcp']);

/**
 * The options of `createScene` a scene should take from its context: seed, bus or bus observer,
 * logger, log, the runner's model and the runner's tools. Spread it into `createScene` so that
 * `troupe run` sees and records everything.
 *
 * @example
 * create: (context) => createScene({ name: 'tavern', ...sceneOptionsFrom(context), world })
 */
export function sceneOptionsFrom(context: SceneContext): Pick<SceneOptions, 'seed' | 'bus' | 'observe' | 'logger' | 'log' | 'model' | 'tools'> {
  const options: Pick<SceneOptions, 'seed' | 'bus' | 'observe' | 'logger' | 'log' | 'model' | 'tools'> = { seed: context.seed };
  if (context.model !== undefined) options.model = context.model;
  if (context.tools !== undefined) options.tools = context.tools;
  if (context.bus !== undefined) options.bus = context.bus;
  if (context.observe !== undefined) options.observe = context.observe;
  if (context.logger !== undefined) options.logger = context.logger;
  if (context.log !== undefined) options.log = context.log;
  return options;
}
