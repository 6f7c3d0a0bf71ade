import { paused, type Pacer } from './pacer.js';
import type { TickGates } from './tick-gates.js';
import type { Scene, SceneResult, SceneStopReason, TickReport } from './types.js';

/** What a stepped run needs of its scene. */
export type SteppedScene = {
  readonly stopped: boolean;
  readonly tick: number;
  step(): Promise<TickReport>;
  stop(reason: string, detail?: string): Promise<SceneResult>;
  /** Why the scene ends after the tick just taken (a spent budget, a quiet cast), if it does. */
  endReason(): { reason: SceneStopReason; detail?: string } | undefined;
};

/**
 * Runs a stepped scene's ticks one after another, as fast as they settle, until tick `until`, a
 * stop, or an end the scene reaches by itself; resolves with how the scene stopped.
 */
export async function runStepped(
  scene: SteppedScene,
  until: number,
  beforeTick: NonNullable<Parameters<Scene['run']>[0]>['beforeTick'],
  gates: TickGates,
  pacer: Pacer,
): Promise<SceneResult> {
  while (!scene.stopped && scene.tick < until) {
    // A host's pause: held until its gate opens, or the scene stops meanwhile.
    const gate = beforeTick?.(scene.tick + 1);
    if (gate !== undefined) {
      await gates.wait(gate);
      if (scene.stopped) break;
    }
    // Ticks chain only microtasks: between two, let signals, timers and sockets in when due.
    if (pacer.due()) {
      await paused(pacer);
      if (scene.stopped) break;
    }
    await scene.step();
    const ended = scene.endReason();
    if (ended !== undefined) return scene.stop(ended.reason, ended.detail);
  }
  // Stopped meanwhile: `stop` gives the result of that stop.
  return scene.stop('ticks');
}
