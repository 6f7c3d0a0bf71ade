/**
 * When a scene lets the event loop in. A tick of scripted turns runs as one synchronous stretch
 * (a turn that can finish at once does, and the next starts in the same loop), and a run of such
 * ticks chains only microtasks: without a pause, signals (Ctrl-C), sockets (the inspector's page)
 * and timers wait until the whole run is over.
 */
export type Pacer = {
  /** Whether the current stretch has run for its slice: time to let the event loop in. */
  due(): boolean;
  /** Lets the event loop in (one macrotask turn), then calls `resume` and starts a new slice. */
  pause(resume: () => void): void;
};

/** The default slice: short enough for Ctrl-C to feel instant, long enough to cost nothing measurable. */
export const DEFAULT_YIELD_EVERY_MS = 20;

// Taken when the module loads: a test that fakes timers must not freeze a scene's pauses, which
// wait for the real event loop (signals, sockets), not for simulated time.
const realSetImmediate = setImmediate;
const wallNow = performance.now.bind(performance);

/**
 * A pacer that asks for a pause once `sliceMs` of wall time have passed since the last one:
 * `0` pauses at every chance, `Infinity` never.
 */
export function createPacer(sliceMs: number): Pacer {
  if (sliceMs === Number.POSITIVE_INFINITY) return NEVER;
  let deadline = wallNow() + sliceMs;
  return {
    due: () => wallNow() >= deadline,
    pause(resume) {
      realSetImmediate(() => {
        deadline = wallNow() + sliceMs;
        resume();
      });
    },
  };
}

/** A pacer that never pauses (`yieldEveryMs: Infinity`): a benchmark's baseline. */
const NEVER: Pacer = Object.freeze({ due: () => false, pause: (resume: () => void) => resume() });

/** `pacer.pause` as a promise, for an async loop. */
export function paused(pacer: Pacer): Promise<void> {
  return new Promise<void>((resolve) => pacer.pause(resolve));
}
