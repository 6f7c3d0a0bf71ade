import { BUILT_IN_TOOLS, ConfigError, createScene, type Scene, type SceneContext } from '../../src/index.js';
import { wanderer, wanderTool, type CrowdCensus } from './npc.js';

/** The most NPCs a crowd takes (the `npcs` option's maximum). */
export const MAX_NPCS = 1_000_000;

/** How to build a crowd. */
export type CrowdOptions = Omit<SceneContext, 'options'> & {
  /** How many NPCs (1 to 1,000,000). */
  npcs: number;
  /** How often the scene lets the event loop in (see `createScene`); the benchmark compares `Infinity`. */
  yieldEveryMs?: number;
};

/** A crowd scene, with the census its wander tool keeps. */
export type CrowdScene = Scene & { readonly census: CrowdCensus };

/**
 * N identical NPCs on the `every-tick` policy: each takes one step across the town square every
 * tick. The scale benchmark: every NPC shares one tools array (so one registry, manifest and set
 * of validators) and one brain function (so one provider), and keeps no state of its own beyond
 * what the runtime keeps for any agent.
 *
 * @example
 * const crowd = buildCrowd({ seed: 1, npcs: 10_000 });
 * const result = await crowd.run({ ticks: 5 });
 * console.log(result.turns, crowd.census.steps); // 50000 50000
 */
export function buildCrowd(options: CrowdOptions): CrowdScene {
  const { npcs } = options;
  if (!Number.isSafeInteger(npcs) || npcs < 1 || npcs > MAX_NPCS) {
    throw new ConfigError(`crowd: npcs must be an integer from 1 to ${MAX_NPCS.toLocaleString('en-US')}, got ${String(npcs)}`);
  }
  const scene = createScene({
    name: 'crowd',
    seed: options.seed,
    schedule: 'every-tick',
    clock: { mode: 'stepped' },
    // Walkers only walk: without the built-ins, the one tool list is as small as it gets.
    withoutTools: BUILT_IN_TOOLS,
    ...(options.yieldEveryMs !== undefined && { yieldEveryMs: options.yieldEveryMs }),
    // Whoever runs the scene (troupe run, a test) sees every event through these.
    bus: options.bus,
    observe: options.observe,
    logger: options.logger,
    log: options.log,
    tools: options.tools,
  });
  const census: CrowdCensus = { steps: 0, farthest: 0, startedAt: undefined, wallMs: undefined };
  // Wall time is for the summary's steps/s only; events keep the scene's own (simulated) time.
  scene.bus.on('scene.started', () => void (census.startedAt = performance.now()));
  scene.bus.on('scene.stopped', () => void (census.wallMs = performance.now() - (census.startedAt ?? performance.now())));
  const tools = [wanderTool(census)];
  for (let index = 0; index < npcs; index++) {
    // The same `tools` array and `wanderer` function for all: the cast builds each shared thing once.
    scene.add({ name: `npc-${index + 1}`, brain: wanderer, tools, triggers: [] });
  }
  return Object.assign(scene, { census });
}

/** The crowd's summary line: turns, steps and how fast they ran. */
export function crowdSummary(scene: Scene, result: { reason: string; tick: number; turns: number; failures: number }): string {
  const census = (scene as Partial<CrowdScene>).census;
  const npcs = scene.agents.size.toLocaleString('en-US');
  const seconds = (census?.wallMs ?? 0) / 1_000;
  const rate = seconds > 0 ? `, ${Math.round(result.turns / seconds).toLocaleString('en-US')} steps/s` : '';
  const steps = census === undefined ? '' : `; ${census.steps.toLocaleString('en-US')} steps taken, the farthest walker ${census.farthest} paces from the middle`;
  return `crowd of ${npcs} stopped at tick ${result.tick} (${result.reason}): ${result.turns.toLocaleString('en-US')} turns${rate}${steps}${result.failures > 0 ? `; ${result.failures} failed` : ''}.`;
}
