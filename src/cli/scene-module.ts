import type { Bus } from '../bus/bus.js';

/** What a folder in `scenes/` exports as `scene` for `troupe run` to load. */
export type SceneModule = {
  description: string;
  /** Runs the scene on the given bus and returns a one-line summary. */
  run(context: { bus: Bus }): Promise<string>;
};
