import { createScene, type CastMember, type Envelope, type EventType, type JsonValue, type Scene, type SceneResult } from '../../src/index.js';
import { createEventHistory, createTickGate, startInspector, type EventHistory, type Inspector, type TickGate } from '../../src/inspect/index.js';
import { afterEach } from 'vitest';
import { openInspector, useBrowser, type WatchedPage } from './browser.js';

/**
 * A scene on a stepped clock with the inspector in front of it, as `troupe run --inspect` sets one
 * up: one event history for the bus (so a restarted server resumes its clients), a tick gate the
 * page can pause and step, the server on a free port of 127.0.0.1.
 */
export type Stage = {
  scene: Scene;
  history: EventHistory;
  gate: TickGate;
  inspector: Inspector;
  /** Every event of the scene's bus, in order. */
  events: Envelope[];
  /** Runs `ticks` ticks through the gate (in the background: await the promise when needed). */
  run(ticks: number): Promise<SceneResult>;
  /** Resolves with the first event of `type` (from now on, or already seen) that `where` accepts. */
  next<T extends EventType>(type: T, where?: (event: Envelope<T>) => boolean): Promise<Envelope<T>>;
  /** Opens the gate, stops the scene and the server. */
  close(): Promise<void>;
};

export type StageOptions = {
  name?: string;
  cast: readonly CastMember[];
  world?: Record<string, JsonValue>;
  /** Start with the gate closed: nothing runs until the page (or the test) resumes or steps. */
  paused?: boolean;
  /** Events the history holds (default: the history's own default). */
  historySize?: number;
};

export async function startStage(options: StageOptions): Promise<Stage> {
  const events: Envelope[] = [];
  const scene = createScene({
    name: options.name ?? 'stage',
    world: options.world ?? {},
    clock: { mode: 'stepped' },
    schedule: 'trigger',
    seed: 1,
    observe: (bus) => bus.on('*', (event) => void events.push(event)),
  });
  // Before the cast joins: `agent.spawned` is part of the story the page replays.
  const history = createEventHistory(scene.bus, options.historySize === undefined ? {} : { size: options.historySize });
  for (const member of options.cast) scene.add(member);
  const gate = createTickGate(scene, { paused: options.paused === true });
  const inspector = await startInspector({ scene, history, gate, port: 0, onNotice: () => {} });
  let running: Promise<SceneResult> | undefined;

  // A test may swap `inspector` and `history` (a restarted server): `close` ends the current ones.
  const stage: Stage = {
    scene,
    history,
    gate,
    inspector,
    events,
    run(ticks) {
      running = scene.run({ ticks, beforeTick: gate.beforeTick });
      return running;
    },
    next(type, where = () => true) {
      const seen = events.find((event) => event.type === type && where(event as never));
      if (seen !== undefined) return Promise.resolve(seen as never);
      return new Promise((resolve) => {
        const stop = scene.bus.on(type, (event) => {
          if (!where(event as never)) return;
          stop();
          resolve(event as never);
        });
      });
    },
    async close() {
      gate.release();
      await scene.stop();
      await running?.catch(() => undefined);
      await stage.inspector.close();
    },
  };
  return stage;
}

/**
 * Stages and pages for the tests of one file, each closed after its test (pages first). Launches
 * the file's browser when the first page is opened.
 *
 * @example
 * const staged = useStagedPages();
 * const stage = await staged.stage({ cast });
 * const view = await staged.page(stage);
 */
export function useStagedPages(): {
  stage(options: StageOptions): Promise<Stage>;
  page(stage: Stage, viewport?: { width?: number; height?: number }): Promise<WatchedPage>;
} {
  const browser = useBrowser();
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  });
  return {
    async stage(options) {
      const stage = await startStage(options);
      opened.push(stage);
      return stage;
    },
    async page(stage, viewport) {
      const view = await openInspector(await browser(), stage.inspector.url, viewport);
      opened.push(view);
      return view;
    },
  };
}
