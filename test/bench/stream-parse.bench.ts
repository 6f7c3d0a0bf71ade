import { createAgent, defineTool, type Provider, type StreamEvent } from '../../src/index.js';
import { createActionScanner, parseOutput } from '../../src/protocol/index.js';
import type { Row } from './measure.js';

/**
 * The streaming `<ACTION>` parser fed chunks of 4 characters (about a token) and of one character,
 * each against one batch parse of the same output in the same samples (targets: at most 2× and
 * 5×), for outputs of 1 KB, 100 KB and 1 MB; the streamed cost per character of the largest output
 * over that of 1 KB (target: within 1.3×, linear); and the time from the chunk that closes
 * `</ACTION>` to `tool.started`.
 */
export async function benchStreamParse(sizes: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  const perChar: { label: string; size: number; by4: number; by1: number }[] = [];
  for (const size of sizes) {
    const output = modelOutput(size);
    // The chunks arrive as strings a provider has already made: split before timing.
    const chunks: string[] = [];
    for (let index = 0; index < output.length; index += 4) chunks.push(output.slice(index, index + 4));
    // A block as large as the output: the limit is raised so that the whole block is scanned.
    const options = { limits: { maxActionChars: 2 * size } };
    const repeats = Math.max(3, Math.round(2_000_000 / size));
    const [batch, by4, by1] = timeAll(repeats, [
      () => {
        if (parseOutput(output, options).calls.length !== 1) throw new Error('stream bench: the batch parse found no call');
      },
      () => {
        const scanner = createActionScanner(options);
        for (let index = 0; index < chunks.length; index++) scanner.push(chunks[index]!);
        if (scanner.end().calls.length !== 1) throw new Error('stream bench: the streamed parse found no call');
      },
      () => {
        const scanner = createActionScanner(options);
        for (let index = 0; index < output.length; index++) scanner.push(output[index]!);
        if (scanner.end().calls.length !== 1) throw new Error('stream bench: the streamed parse found no call');
      },
    ]) as [Timing, Timing, Timing];
    const label = size >= 1_000_000 ? `${size / 1_000_000} MB` : `${size / 1_000} KB`;
    const batchNote = `batch ${formatUs(batch.min)} µs (median ${formatUs(batch.median)})`;
    const wallNote = (streamed: Timing): string => `wall clock ${(streamed.wallMin / batch.wallMin).toFixed(2)}×`;
    rows.push({
      name: `<ACTION> parse of ${label}, 4 chars per chunk`,
      iterations: repeats,
      usPerOp: by4.min * 1_000,
      ratio: by4.min / batch.min,
      note: `CPU time, best of ${SAMPLES}; median ${(by4.median / batch.median).toFixed(2)}×; ${wallNote(by4)}; ${batchNote}; target ≤ 2×`,
    });
    rows.push({
      name: `<ACTION> parse of ${label}, one char per chunk`,
      iterations: repeats,
      usPerOp: by1.min * 1_000,
      ratio: by1.min / batch.min,
      note: `CPU time, best of ${SAMPLES}; median ${(by1.median / batch.median).toFixed(2)}×; ${wallNote(by1)}; ${batchNote}; target ≤ 5×`,
    });
    perChar.push({ label, size, by4: (by4.min * 1e6) / size, by1: (by1.min * 1e6) / size });
  }
  const small = perChar[0];
  const large = perChar[perChar.length - 1];
  if (small !== undefined && large !== undefined && large !== small) {
    for (const [what, key] of [['4 chars', 'by4'], ['one char', 'by1']] as const) {
      rows.push({
        name: `<ACTION> streamed per character, ${large.label} over ${small.label}, ${what} per chunk`,
        iterations: 0,
        usPerOp: Number.NaN,
        ratio: large[key] / small[key],
        note: `${perChar.map((row) => `${row.label} ${row[key].toFixed(2)} ns`).join(', ')} a character (CPU time, best of ${SAMPLES}); target within 1.3×`,
      });
    }
  }
  rows.push(await closerToToolStarted(2_000));
  return rows;
}

function formatUs(ms: number): string {
  return (ms * 1_000).toFixed(ms < 0.01 ? 1 : 0);
}

/** Prose, a fenced code sample the scanner must skip, then one call whose argument holds the rest. */
function modelOutput(size: number): string {
  const prose = 'The innkeeper looks up from the ledger and nods. ';
  const fence = '\n```xml\n<ACTION><not_a_call/></ACTION>\n```\n';
  let head = '';
  while (head.length < size * 0.4) head += prose;
  head += fence;
  const open = '<ACTION><write_note><title>ledger</title><text><![CDATA[';
  const close = ']]></text></write_note></ACTION>';
  let body = '';
  const line = 'Two ales for the guard, one stew for the bard, <b>paid</b> & noted.\n';
  while (head.length + open.length + body.length + close.length < size) body += line;
  return `${head}${open}${body.slice(0, Math.max(0, size - head.length - open.length - close.length))}${close}`;
}

/** Samples of each side, interleaved. */
const SAMPLES = 15;

/** The fastest and the median sample of one run, in ms per run: by the process's CPU time, and by the wall clock. */
type Timing = { min: number; median: number; wallMin: number };

/**
 * Times each run the same way: all warmed up, then `SAMPLES` rounds of one sample of `repeats`
 * runs each, the order rotating every round, and the fastest and the median sample of each. The
 * machine's 2 cores are shared: under a load average of 5–9 a sample of a few milliseconds is
 * nearly always descheduled part of the time, which stretched the wall clock of one side by up to
 * 3× and not the other alike. The process's CPU time (user + system, every thread, so the
 * collector's helpers too) only counts the time this process ran, so it is the headline; the
 * fastest wall clock sample is kept for comparison.
 */
function timeAll(repeats: number, runs: readonly (() => void)[]): Timing[] {
  for (let index = 0; index < Math.max(2, Math.ceil(repeats / 4)); index++) for (const run of runs) run();
  const cpu: number[][] = runs.map(() => []);
  const wall: number[][] = runs.map(() => []);
  for (let sample = 0; sample < SAMPLES; sample++) {
    for (let turn = 0; turn < runs.length; turn++) {
      const which = (sample + turn) % runs.length;
      const run = runs[which]!;
      const start = process.hrtime.bigint();
      const startCpu = process.cpuUsage();
      for (let index = 0; index < repeats; index++) run();
      const usedCpu = process.cpuUsage(startCpu);
      wall[which]!.push(Number(process.hrtime.bigint() - start) / 1e6 / repeats);
      cpu[which]!.push((usedCpu.user + usedCpu.system) / 1e3 / repeats);
    }
  }
  return cpu.map((times, which) => {
    const sorted = [...times].sort((a, b) => a - b);
    return { min: sorted[0]!, median: sorted[sorted.length >> 1]!, wallMin: Math.min(...wall[which]!) };
  });
}

/**
 * An agent streaming a reply whose last chunk closes the block: the time from handing that chunk
 * over to the tool's `tool.started`, against a bare loop that finds `</ACTION>` and calls the
 * tool's function itself.
 */
async function closerToToolStarted(runs: number): Promise<Row> {
  const chunks = ['I will note it. ', '<ACTION><note><text>two ales', '</text></note></ACTION>'];
  let closedAt = 0n;
  let total = 0n;
  const note = defineTool({
    name: 'note',
    description: 'Note something.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    execute: () => 'noted',
  });
  const provider: Provider = {
    name: 'stream-bench',
    complete: () => Promise.reject(new Error('streaming only')),
    async *stream(request): AsyncGenerator<StreamEvent> {
      if (request.round > 1) {
        yield { type: 'text', text: 'Done.' };
        yield { type: 'finish', response: { text: 'Done.', finishReason: 'stop' } };
        return;
      }
      yield { type: 'text', text: chunks[0]! };
      yield { type: 'text', text: chunks[1]! };
      closedAt = process.hrtime.bigint();
      yield { type: 'text', text: chunks[2]! };
      yield { type: 'text', text: 'never read' };
    },
  };
  const agent = createAgent({ name: 'bench', tools: [note], provider });
  agent.bus.on('tool.started', () => {
    total += process.hrtime.bigint() - closedAt;
  });
  for (let index = 0; index < runs / 10; index++) await agent.run('note two ales');
  total = 0n;
  for (let index = 0; index < runs; index++) await agent.run('note two ales');
  const troupeUs = Number(total) / 1_000 / runs;

  let bareTotal = 0n;
  const bare = async function* (): AsyncGenerator<string> {
    yield chunks[0]!;
    yield chunks[1]!;
    closedAt = process.hrtime.bigint();
    yield chunks[2]!;
  };
  for (let index = 0; index < runs; index++) {
    let text = '';
    for await (const chunk of bare()) {
      text += chunk;
      const end = text.indexOf('</ACTION>');
      if (end >= 0) {
        const argument = /<text>([^<]*)<\/text>/.exec(text)![1]!;
        bareTotal += process.hrtime.bigint() - closedAt;
        note.execute({ text: argument }, undefined as never);
        break;
      }
    }
  }
  const bareUs = Number(bareTotal) / 1_000 / runs;
  return {
    name: '</ACTION> chunk → tool.started (streaming agent)',
    iterations: runs,
    usPerOp: troupeUs,
    ratio: troupeUs / bareUs,
    note: `parse, validate, approval check and dispatch in between; bare loop ${bareUs.toFixed(1)} µs`,
  };
}
