import type { Bus } from '../bus/bus.js';

/**
 * Pause, resume and single-step for a stepped scene. The runner awaits `beforeTick` before each
 * tick (`scene.run({ beforeTick: gate.beforeTick })`); the inspector's `/control` turns the gate.
 * Changes of the pause state are published as `inspector.paused`.
 */
export type TickGate = {
  readonly paused: boolean;
  /** The tick the runner is held before, or undefined while it runs (or has no runner). */
  readonly holding: number | undefined;
  /** Holds the runner before its next tick. Returns false when already paused. */
  pause(): boolean;
  /** Lets the runner go on. Returns false when not paused. */
  resume(): boolean;
  /** While paused, lets exactly one more tick run (each call one more). Returns false when not paused. */
  step(): boolean;
  /** What the runner awaits before tick `tick`: undefined when it may go on at once. */
  beforeTick: (tick: number) => Promise<void> | undefined;
  /** Resolves with the tick the runner is held before, once it is (at once if it is now). */
  held(): Promise<number>;
  /** Opens the gate for good, without an event: the run is ending (Ctrl-C, the scene stopped). */
  release(): void;
};

/** Who the gate publishes `inspector.paused` for: a scene, or anything with a bus and a tick. */
export type GatedScene = { readonly bus: Bus; readonly name: string; readonly tick: number };

/**
 * Creates a tick gate for `scene`, open unless `paused`.
 *
 * @example
 * const gate = createTickGate(scene);
 * const inspector = await startInspector({ scene, gate });
 * await scene.run({ ticks: 100, beforeTick: gate.beforeTick });
 */
export function createTickGate(scene: GatedScene, options: { paused?: boolean } = {}): TickGate {
  let paused = options.paused === true;
  let released = false;
  let credits = 0;
  let holding: number | undefined;
  let letGo: (() => void) | undefined;
  let heldWaiters: ((tick: number) => void)[] = [];

  const publish = (): void => {
    scene.bus.publish('inspector.paused', { paused, tick: scene.tick }, { scene: scene.name });
  };
  const open = (): void => {
    const resolve = letGo;
    letGo = undefined;
    holding = undefined;
    resolve?.();
  };

  const gate: TickGate = {
    get paused() {
      return paused;
    },
    get holding() {
      return holding;
    },
    pause() {
      if (paused || released) return false;
      paused = true;
      publish();
      return true;
    },
    resume() {
      if (!paused) return false;
      paused = false;
      credits = 0;
      publish();
      open();
      return true;
    },
    step() {
      if (!paused) return false;
      if (letGo !== undefined) open();
      else credits++;
      return true;
    },
    beforeTick(tick) {
      if (!paused || released) return undefined;
      if (credits > 0) {
        credits--;
        return undefined;
      }
      holding = tick;
      const waiters = heldWaiters;
      heldWaiters = [];
      for (const resolve of waiters) resolve(tick);
      return new Promise<void>((resolve) => (letGo = resolve));
    },
    held() {
      if (holding !== undefined) return Promise.resolve(holding);
      return new Promise<number>((resolve) => heldWaiters.push(resolve));
    },
    release() {
      released = true;
      paused = false;
      open();
    },
  };
  return gate;
}
