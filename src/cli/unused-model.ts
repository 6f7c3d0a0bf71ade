import type { Scene } from '../scene/types.js';

/**
 * Why `--model` would change nothing in `scene`, or undefined when some member deliberates on it.
 * Only members with a scripted brain and instructions take the scene's model; a scene that does
 * not pass `context.model` on, or whose members have no instructions, would run as scripted and
 * make no request at all — a run the user did not ask for.
 */
export function unusedModel(scene: Scene, spec: string): string | undefined {
  for (const agent of scene.agents.values()) if (agent.onSceneModel === true) return undefined;
  return (
    `--model ${spec}: no member of scene "${scene.name}" can think with a model, so nothing would use it ` +
    '(only members with a scripted brain and instructions take --model, in a scene that passes context.model to createScene)'
  );
}
