import { recordProvider } from '../llm/cassette.js';
import { resolveModel } from '../llm/resolve-model.js';
import type { SceneModel } from '../scene/types.js';
import type { CliIo } from './cli-io.js';

/** What `--model` (with `--protocol`, and `--record`'s cassette) names. */
export type ModelFlags = { model: string; protocol?: 'xml' | 'native' | undefined; record?: string | undefined };

/** The model `--model` names, as a scene takes it: recorded to `--record`'s cassette when asked. */
export async function sceneModel(flags: ModelFlags, io: Pick<CliIo, 'env' | 'loadAdapter'>): Promise<SceneModel> {
  const provider = await resolveModel(flags.model, { env: io.env, loadAdapter: io.loadAdapter });
  return {
    provider: flags.record !== undefined ? recordProvider(provider, flags.record) : provider,
    ...(flags.protocol !== undefined && { protocol: flags.protocol }),
  };
}

/** Why `--model` failed, in one line that reads on from the flag ("--model openai:gpt-4o needs the openai package…"). */
export function modelProblem(spec: string, error: unknown): string {
  const message = (error as Error).message;
  return message.startsWith(`${spec} `) ? `--model ${message}` : `--model ${spec}: ${message}`;
}
