import type { Scene } from '../scene/types.js';
import { exitCodeOf, type CliIo, type StopSignal } from './cli-io.js';

/** What `stopOnSignals` saw, and how to stop listening. */
export type SignalWatch = {
  /** The first stop signal, once one came: the run then exits with its code. */
  readonly signal: StopSignal | undefined;
  /** Stops listening (the process's default handling takes over again). */
  dispose(): void;
};

/**
 * Stops `scene` on the first Ctrl-C or SIGTERM (the scene publishes `scene.stopped` with detail
 * `interrupted` or `terminated`), and ends the process at once on the second, whatever the
 * first is still waiting for. Listening starts as soon as the scene exists, so that a signal
 * during the inspector's start-up is not the process's default death.
 */
export function stopOnSignals(scene: Scene, io: CliIo, note: (line: string) => void): SignalWatch {
  let first: StopSignal | undefined;
  const dispose = io.interrupts((signal = 'SIGINT') => {
    if (first !== undefined) return io.exit(exitCodeOf(signal));
    first = signal;
    note(signal === 'SIGINT' ? 'troupe: stopping the scene (Ctrl-C again to quit at once)' : 'troupe: SIGTERM: stopping the scene (again to quit at once)');
    scene.stop(signal === 'SIGINT' ? 'interrupted' : 'terminated').catch(() => undefined);
  });
  return {
    get signal() {
      return first;
    },
    dispose,
  };
}
