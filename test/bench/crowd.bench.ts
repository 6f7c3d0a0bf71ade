import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildCrowd } from '../../scenes/crowd/index.js';
import { createBus, type Scene } from '../../src/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import { settledHeap, type Row } from './measure.js';

/**
 * The crowd scene at scale: N identical NPCs, each deliberating once per tick with a zero-latency
 * scripted brain and one tool call per turn, every event delivered to a subscriber. Reports
 * agent-steps per second over the ticks after the first (the first builds each agent's lazy
 * state), heap per agent at rest between ticks, and a bare hand-written loop doing the same work
 * (parse the brain's block, check the arguments, call the tool, record two events) for scale.
 */
export async function benchCrowd(sizes: readonly number[], minTicks: number, minSteps: number): Promise<Row[]> {
  const rows: Row[] = [];
  // Each size twice: as scenes run (letting the event loop in every 20 ms, so Ctrl-C works), and
  // never letting it in, the way ticks ran before — the cost of the pauses, measured side by side.
  for (const npcs of sizes) {
    for (const yieldEveryMs of [Number.POSITIVE_INFINITY, undefined]) rows.push(await crowdRow(npcs, minTicks, minSteps, yieldEveryMs));
  }
  return rows;
}

export async function crowdRow(npcs: number, minTicks: number, minSteps: number, yieldEveryMs: number | undefined): Promise<Row> {
  // Small crowds run more ticks, so that every size is timed over enough steps to be warm.
  const ticks = Math.max(minTicks, Math.ceil(minSteps / npcs) + 1);
  const before = settledHeap();
  let delivered = 0;
  const bus = createBus({ ids: sequentialIds('crowd') });
  bus.on('*', () => void delivered++);
  const scene: Scene = buildCrowd({ npcs, seed: 1, bus, ...(yieldEveryMs !== undefined && { yieldEveryMs }) });
  await scene.start();
  const warm = await scene.step();
  if (warm.turns !== npcs) throw new Error(`tick 1 ran ${warm.turns} turns for ${npcs} NPCs`);
  const atRest = settledHeap();
  const start = process.hrtime.bigint();
  for (let tick = 1; tick < ticks; tick++) {
    const report = await scene.step();
    if (report.turns !== npcs || report.outcomes.turn_ended !== npcs) throw new Error(`tick ${report.tick}: ${JSON.stringify(report.outcomes)}`);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await scene.stop();
  // Ids are counted: the last id's number is how many events were published.
  const published = Number(bus.ids().split('-')[1]) - 1;
  if (delivered !== published) throw new Error(`the bus delivered ${delivered} of ${published} events`);
  const steps = npcs * (ticks - 1);
  const perSecond = steps / seconds;
  const bare = bareCrowd(npcs, ticks - 1);
  return {
    name: `crowd: ${npcs.toLocaleString('en-US')} NPCs × ${ticks - 1} ticks${yieldEveryMs === undefined ? '' : ', never yielding'}`,
    iterations: steps,
    usPerOp: 1e6 / perSecond,
    ratio: 1e6 / perSecond / bare,
    note: `${Math.round(perSecond).toLocaleString('en-US')} agent-steps/s; ${Math.round((atRest - before) / npcs).toLocaleString('en-US')} bytes/agent; ${(delivered / (npcs * ticks)).toFixed(1)} events/step, all delivered`,
  };
}

/**
 * The crowd at `npcs` in a fresh process started with `execArgv` (V8's heap flags can only be set
 * at startup), as scenes run: its row, named with the flags. A million NPCs hold a 4 GB heap, and
 * every minor collection pays a cost that grows with the old generation (about 14 ms a scavenge at
 * a million, 3.5 ms at 100,000): a larger young generation makes fewer of them.
 */
export function crowdRowInChild(npcs: number, minTicks: number, execArgv: readonly string[]): Promise<Row> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./crowd-child.js', import.meta.url)), [String(npcs), String(minTicks)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--expose-gc', '--max-old-space-size=16384', ...execArgv],
    });
    let row: Row | undefined;
    child.on('message', (message: Row) => void (row = message));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (row === undefined) return reject(new Error(`the crowd of ${npcs} ended without a row (exit ${code ?? signal})`));
      const flags = execArgv.filter((flag) => flag.startsWith('--max-semi'));
      resolve({ ...row, name: `${row.name}, ${flags.length === 0 ? 'default heap' : `node ${flags.join(' ')}`}` });
    });
  });
}

/** The bare baseline: what one NPC step does, written by hand, in µs per step. */
function bareCrowd(npcs: number, ticks: number): number {
  const positions = new Float64Array(npcs * 2);
  const events: unknown[] = [];
  let seed = 1;
  const random = (): number => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) | 0) >>> 0) / 0x1_0000_0000;
  const start = process.hrtime.bigint();
  for (let tick = 0; tick < ticks; tick++) {
    for (let npc = 0; npc < npcs; npc++) {
      const text = `<ACTION><wander><dx>${Math.floor(random() * 3) - 1}</dx><dy>${Math.floor(random() * 3) - 1}</dy></wander></ACTION>`;
      const dx = Number(text.slice(text.indexOf('<dx>') + 4, text.indexOf('</dx>')));
      const dy = Number(text.slice(text.indexOf('<dy>') + 4, text.indexOf('</dy>')));
      if (!Number.isInteger(dx) || !Number.isInteger(dy)) throw new Error('bad arguments');
      positions[npc * 2] = positions[npc * 2]! + dx;
      positions[npc * 2 + 1] = positions[npc * 2 + 1]! + dy;
      events.push({ type: 'tool.completed', npc, dx, dy });
      if (events.length > 1024) events.length = 0;
    }
  }
  return Number(process.hrtime.bigint() - start) / 1_000 / (npcs * ticks);
}
