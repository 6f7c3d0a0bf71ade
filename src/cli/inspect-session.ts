import type { Bus } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import { createEventHistory, DEFAULT_HISTORY_SIZE, type EventHistory } from '../inspect/event-history.js';
import { startInspector, type Inspector } from '../inspect/start-inspector.js';
import { createTickGate, type TickGate } from '../inspect/tick-gate.js';
import { failure, success, type Outcome } from '../outcome.js';
import type { Scene } from '../scene/types.js';
import type { CliIo } from './cli-io.js';

/** Events `troupe run --inspect` keeps for pages that connect late or reconnect. */
export const RUN_HISTORY_SIZE = DEFAULT_HISTORY_SIZE * 5;

/**
 * Events a page may have waiting, per agent of the scene: a tick publishes about 14 per agent
 * before the server can write, and a page that reads must hold two ticks' worth without being
 * taken for one that stopped reading.
 */
const QUEUE_PER_AGENT = 32;
const MIN_QUEUE = 10_000;

/** One turn of the event loop: the server's sockets write. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** An inspector the CLI started, and how it ends. */
export type InspectorSession = {
  readonly inspector: Inspector;
  /** The gate a scene runs under (pause, resume, step); absent for a log. */
  readonly gate: TickGate | undefined;
  /**
   * What the scene's runner awaits before each tick: the gate, and otherwise one turn of the event
   * loop, so the server writes to its pages between ticks (a tick of instant brains never yields).
   */
  readonly beforeTick: (tick: number) => Promise<void>;
  /** Says the server is still there and resolves on Ctrl-C. */
  serveUntilInterrupted(what: string): Promise<void>;
  close(): Promise<void>;
};

/**
 * What to serve: a live scene with the history recorded since its bus appeared, a log's events, or
 * a bus without its scene (a scene's Redis stream, replayed onto a local bus), read-only.
 */
export type InspectTarget = { scene: Scene; history: EventHistory } | { events: readonly Envelope[] } | { bus: Bus; history: EventHistory };

/**
 * Starts the inspector for a command and prints `inspector: <url>` on stderr (the token is in it:
 * stdout may be piped to other tools). Notices (an address beyond loopback, a dropped client) go
 * to `note`, the warning before the URL.
 */
export async function openInspectorSession(
  target: InspectTarget,
  where: { port: number | undefined; host: string | undefined; paused?: boolean },
  io: CliIo,
  note: (line: string) => void,
): Promise<Outcome<InspectorSession, string>> {
  if (where.paused === true && 'scene' in target && target.scene.clockMode !== 'stepped') {
    return failure(`--paused works for stepped scenes; ${target.scene.name} runs on a ${target.scene.clockMode} clock`);
  }
  const gate = 'scene' in target ? createTickGate(target.scene, { paused: where.paused === true }) : undefined;
  let inspector: Inspector;
  try {
    inspector = await startInspector({
      ...('scene' in target ? { scene: target.scene, history: target.history, gate } : 'bus' in target ? { bus: target.bus, history: target.history } : { events: target.events }),
      port: where.port ?? 0,
      ...('scene' in target && { queue: Math.max(MIN_QUEUE, QUEUE_PER_AGENT * target.scene.agents.size) }),
      ...(where.host === undefined ? {} : { host: where.host }),
      onNotice: (notice) => note(notice.message),
    });
  } catch (error) {
    return failure((error as Error).message);
  }
  note(`inspector: ${inspector.url}`);
  if (gate?.paused === true) note('inspector: the scene is paused before its first tick: Resume or Step on the page');
  return success({
    inspector,
    gate,
    beforeTick: (tick) => gate?.beforeTick(tick) ?? nextTurn(),
    serveUntilInterrupted(what) {
      note(`inspector: ${what}; still serving ${inspector.url} (Ctrl-C to quit)`);
      return new Promise<void>((resolve) => {
        const stop = io.interrupts(() => {
          stop();
          resolve();
        });
      });
    },
    close: () => inspector.close(),
  });
}

/** The history `troupe run --inspect` records a scene's bus into, from its first event. */
export function runHistory(bus: Parameters<typeof createEventHistory>[0]): EventHistory {
  return createEventHistory(bus, { size: RUN_HISTORY_SIZE });
}
