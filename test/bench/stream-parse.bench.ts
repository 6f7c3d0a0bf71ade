import { createAgent, defineTool, type Provider, type StreamEvent } from '../../src/index.js';
import { createActionScanner, parseOutput } from '../../src/protocol/index.js';
import type { Row } from './measure.js';

/**
 * The streaming `<ACTION>` parser fed one character at a time against one batch parse of the same
 * output (the target: at most 3× the batch cost), for outputs of 1 KB, 100 KB and 1 MB; and the
 * time from the chunk that closes `</ACTION>` to `tool.started`.
 */
export async function benchStreamParse(sizes: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of sizes) {
    const output = modelOutput(size);
    // A block as large as the output: the limit is raised so that the whole block is scanned.
    const options = { limits: { maxActionChars: 2 * size } };
    const repeats = Math.max(3, Math.round(2_000_000 / size));
    const { batch, streamed } = timeBoth(
      repeats,
      () => {
        if (parseOutput(output, options).calls.length !== 1) throw new Error('stream bench: the batch parse found no call');
      },
      () => {
        const scanner = createActionScanner(options);
        for (let index = 0; index < output.length; index++) scanner.push(output[index]!);
        if (scanner.end().calls.length !== 1) throw new Error('stream bench: the streamed parse found no call');
      },
    );
    const label = size >= 1_000_000 ? `${size / 1_000_000} MB` : `${size / 1_000} KB`;
    rows.push({
      name: `<ACTION> parse of ${label}, one char per chunk`,
      iterations: repeats,
      usPerOp: streamed * 1_000,
      ratio: streamed / batch,
      note: `batch parse ${(batch * 1_000).toFixed(0)} µs; target ≤ 3×`,
    });
  }
  rows.push(await closerToToolStarted(2_000));
  return rows;
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

/** Samples of each side, alternated; each side's median is the result. */
const SAMPLES = 7;

/**
 * Times the batch and the streamed parse the same way: both warmed up, then `SAMPLES` samples of
 * `repeats` runs each, alternating batch and stream, and the median sample of each. A single
 * timing (one warm-up run, then one loop) swung by 2–5× on a shared VM, and at 1 MB it timed the
 * batch parse over only three runs; the median of alternated samples keeps a burst of load from
 * landing on one side only.
 */
function timeBoth(repeats: number, batch: () => void, stream: () => void): { batch: number; streamed: number } {
  for (let index = 0; index < Math.max(2, Math.ceil(repeats / 4)); index++) {
    batch();
    stream();
  }
  const batches: number[] = [];
  const streams: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    batches.push(timeMs(repeats, batch));
    streams.push(timeMs(repeats, stream));
  }
  return { batch: median(batches), streamed: median(streams) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

function timeMs(repeats: number, run: () => void): number {
  const start = process.hrtime.bigint();
  for (let index = 0; index < repeats; index++) run();
  return Number(process.hrtime.bigint() - start) / 1e6 / repeats;
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
