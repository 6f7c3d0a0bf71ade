import type { Bus } from '../bus/bus.js';
import { defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';
import type { Tool } from '../tools/types.js';
import { frozenJson } from './json-value.js';
import type { SceneMember } from './scene-member.js';
import type { JsonValue, WorldState } from './world-types.js';

/** What the built-in tools need of their scene. */
export type SceneToolHost = {
  readonly name: string;
  readonly bus: Bus;
  readonly world: WorldState;
  member(name: string): SceneMember | undefined;
  memberNames(): string[];
  /** Sets (or, with `null`, removes) a key of a member's private state, publishing `private.changed`. */
  setPrivate(member: SceneMember, key: string, value: JsonValue, cause: string | undefined): void;
};

/** The names of the built-in scene tools. */
export const BUILT_IN_TOOLS = ['read_world', 'update_private', 'say', 'publish_event'] as const;

const MAX_SPEECH = 2_000;

/**
 * The built-in tools every scene agent gets, as ordinary tools: read the world, update
 * its own private state, say something others hear, publish a scene event. They go through the
 * same validation, dispatch and events as any tool.
 */
export function sceneTools(host: SceneToolHost): Tool[] {
  const caller = (agent: string): SceneMember => {
    const member = host.member(agent);
    if (member === undefined) throw new ToolError(`"${agent}" is not an agent of scene "${host.name}"`, { kind: 'permission' });
    return member;
  };

  const readWorld = defineTool({
    name: 'read_world',
    description: 'Read a value from the shared world state by its dot-separated path (e.g. "tavern.stock.ale"); an empty path reads everything.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', maxLength: 512, description: 'Dot-separated path; "" for the whole world.' },
        default: { description: 'Returned when nothing is at the path (otherwise that is an error).' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    readOnly: true,
    execute: ({ path, default: fallback }) => {
      const value = host.world.get(path as string);
      if (value !== undefined) return value;
      if (fallback !== undefined) return fallback;
      throw new ToolError(`nothing in the world at "${String(path)}"`, { kind: 'not_found', hint: 'read a parent path to see what exists' });
    },
  });

  const updatePrivate = defineTool({
    name: 'update_private',
    description: 'Set a key of your private state (only you see it; it is shown to you each turn). A null value removes the key.',
    parameters: {
      type: 'object',
      properties: {
        key: { type: 'string', maxLength: 64, pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$', description: 'The key to set.' },
        // Typed so that XML text converts: `3` is a number, `true` a boolean, `null` removes the key.
        value: { type: ['null', 'boolean', 'number', 'array', 'object', 'string'], description: 'A number, true/false, text, a list or an object; null removes the key.' },
      },
      required: ['key', 'value'],
      additionalProperties: false,
    },
    execute: ({ key, value }, { agent, dispatcher }) => {
      host.setPrivate(caller(agent), key as string, value as JsonValue, dispatcher?.startedId);
      return { key, value };
    },
  });

  const say = defineTool({
    name: 'say',
    description: 'Say something aloud in the scene; everyone hears it. Name one agent in "to" to address them.',
    parameters: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, maxLength: MAX_SPEECH, description: 'What you say.' },
        to: { type: 'string', maxLength: 64, description: 'The agent you speak to (optional).' },
      },
      required: ['text'],
      additionalProperties: false,
    },
    execute: ({ text, to }, { agent, dispatcher }) => {
      caller(agent);
      if (to !== undefined && host.member(to as string) === undefined) {
        throw new ToolError(`no agent "${String(to)}" in this scene`, { kind: 'not_found', hint: `agents here: ${host.memberNames().join(', ')}` });
      }
      const data = to === undefined ? { text: text as string } : { text: text as string, to: to as string };
      // The speech follows from the call that made it, so a log reads as a tree.
      host.bus.publish('agent.said', data, { agent, scene: host.name, cause: dispatcher?.startedId });
      return to === undefined ? 'said' : `said to ${String(to)}`;
    },
  });

  const publishEvent = defineTool({
    name: 'publish_event',
    description: 'Publish a named event to the scene (agents subscribed to it are woken).',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_.:-]{0,63}$', description: 'The event name, e.g. "alarm".' },
        payload: { type: 'object', description: 'Event data (a JSON object).' },
      },
      required: ['name'],
      additionalProperties: false,
    },
    execute: ({ name, payload }, { agent, dispatcher }) => {
      caller(agent);
      const data = payload === undefined ? { name: name as string } : { name: name as string, payload: frozenJson(payload, 'payload') };
      host.bus.publish('scene.event', data, { agent, scene: host.name, cause: dispatcher?.startedId });
      return { published: name };
    },
  });

  return [readWorld, updatePrivate, say, publishEvent];
}
