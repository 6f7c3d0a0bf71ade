import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Row } from './measure.js';
import type { RoundReport } from './round-child.js';

/**
 * A round of N participants whose brains each wait a second (a model's latency, standing in) and
 * make one call, every participant in flight at once: seconds per round and peak RSS, each size in
 * a fresh process of its own so that its memory is its own. The bare floor of a round is the
 * latency itself (1 s).
 */
export async function benchRound(sizes: readonly number[], rounds = 2, latencyMs = 1_000): Promise<Row[]> {
  const rows: Row[] = [];
  for (const participants of sizes) {
    const report = await inChild(participants, rounds, latencyMs);
    const best = Math.min(...report.rounds);
    const gib = (bytes: number): string => (bytes / 2 ** 30).toFixed(2);
    rows.push({
      name: `round of ${participants.toLocaleString('en-US')} participants, ${latencyMs} ms of latency each`,
      iterations: participants * rounds,
      usPerOp: best * 1e6,
      ratio: (best * 1000) / latencyMs,
      note:
        `${report.rounds.map((seconds) => seconds.toFixed(2)).join(' / ')} s a round (vs bare: the latency); ${report.turns.toLocaleString('en-US')} turns ended; ` +
        `peak RSS ${gib(report.peakRssBytes)} GiB, heap after ${gib(report.heapBytes)} GiB (${Math.round(report.heapBytes / participants).toLocaleString('en-US')} bytes per participant); cast built in ${report.buildSeconds.toFixed(2)} s`,
    });
  }
  return rows;
}

function inChild(participants: number, rounds: number, latencyMs: number): Promise<RoundReport> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./round-child.js', import.meta.url)), [String(participants), String(rounds), String(latencyMs)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--max-old-space-size=16384'],
    });
    let report: RoundReport | undefined;
    child.on('message', (message: RoundReport) => void (report = message));
    child.once('error', reject);
    child.once('exit', (code, signal) => (report === undefined ? reject(new Error(`the round of ${participants} ended without a report (exit ${code ?? signal})`)) : resolve(report)));
  });
}
