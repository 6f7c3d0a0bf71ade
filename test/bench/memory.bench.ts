import { createScene, defineTool, scriptedProvider, type MemoryOptions } from '../../src/index.js';
import { countMessageTokens, countTokens } from '../../src/agent/memory/index.js';
import type { Row } from './measure.js';

/**
 * Compact history against full history on a long, tool-heavy run: one scene agent, driven by a
 * scripted model, makes one call per turn for `calls` turns; each result is 5–20 KB of text. Counts
 * (cl100k) every request the model is sent and the history kept at the end. The agent never reads
 * a variable back: the best case for compact history (a `read_var` page costs about 1,000 tokens).
 * A third run keeps full history under the default budget, for what dropping turns saves instead.
 * Time per turn is mostly the bench itself counting every request's tokens.
 */
export async function benchMemory(calls: number): Promise<Row[]> {
  const full = await runScene(calls, { history: 'full', maxTokens: 10_000_000 });
  const compact = await runScene(calls, { history: 'compact', maxTokens: 10_000_000 });
  const budgeted = await runScene(calls, { history: 'full' });
  const saved = (1 - compact.sent / full.sent) * 100;
  const note = (run: SceneRun): string =>
    `${run.sent.toLocaleString('en-US')} tokens sent over ${calls} requests; ${run.kept.toLocaleString('en-US')} tokens kept at the end; ` +
    `${(run.resultChars / calls / 1_000).toFixed(1)} KB per result`;
  return [
    { name: `memory: full history, ${calls} calls`, iterations: calls, usPerOp: full.usPerTurn, note: note(full) },
    {
      name: `memory: compact history, ${calls} calls`,
      iterations: calls,
      usPerOp: compact.usPerTurn,
      note: `${note(compact)}; ${saved.toFixed(1)} % fewer tokens sent than full`,
    },
    {
      name: `memory: full history, default 16,000-token budget, ${calls} calls`,
      iterations: calls,
      usPerOp: budgeted.usPerTurn,
      note: `${note(budgeted)}; ${budgeted.compactions} compactions (drop-oldest): it remembers only its last few calls`,
    },
  ];
}

type SceneRun = { sent: number; kept: number; usPerTurn: number; resultChars: number; compactions: number };

async function runScene(calls: number, memory: MemoryOptions): Promise<SceneRun> {
  let sent = 0;
  let resultChars = 0;
  const count = (text: string): number => countTokens(text, 'cl100k_base');
  let turn = 0;
  const provider = scriptedProvider((request) => {
    sent += countMessageTokens(request.messages, count);
    turn++;
    return `Fetching record ${turn}.<ACTION><fetch_record><id>${turn}</id></fetch_record></ACTION>`;
  });
  const fetchRecord = defineTool({
    name: 'fetch_record',
    description: 'Fetch a record by id.',
    parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: false },
    readOnly: true,
    execute: ({ id }) => {
      const text = recordText(id as number);
      resultChars += text.length;
      return text;
    },
  });
  const scene = createScene({ name: 'archive', seed: 1 });
  const clerk = scene.add({
    name: 'clerk',
    provider,
    instructions: 'You are the archive clerk. Fetch each record in turn.',
    tools: [fetchRecord],
    triggers: [{ every: 1, offset: 1 }],
    memory,
  });
  let compactions = 0;
  scene.bus.on('memory.compacted', () => void compactions++);
  await scene.start();
  const start = process.hrtime.bigint();
  for (let tick = 0; tick < calls; tick++) await scene.step();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await scene.stop();
  if (turn !== calls) throw new Error(`the clerk made ${turn} calls, not ${calls}`);
  return { sent, kept: clerk.agent.memory!.tokens(), usPerTurn: (seconds * 1e6) / calls, resultChars, compactions };
}

const WORDS = ['ledger', 'entry', 'amount', 'date', 'account', 'north', 'wing', 'shelf', 'box', 'note', 'signed', 'clerk', 'copy', 'seal'];

/** A record of 5–20 KB: JSON-ish lines of words and numbers, the same for the same id. */
function recordText(id: number): string {
  let seed = id * 2_654_435_761;
  const next = (): number => ((seed = (Math.imul(seed ^ (seed >>> 15), 2_246_822_507) + 3_266_489_909) | 0) >>> 0) / 0x1_0000_0000;
  const size = 5_000 + Math.floor(next() * 15_000);
  const lines: string[] = [];
  let length = 0;
  for (let line = 0; length < size; line++) {
    const text = `{"line":${line},"word":"${WORDS[Math.floor(next() * WORDS.length)]}","value":${Math.floor(next() * 100_000)},"ref":"${id}-${line}"}`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join('\n').slice(0, size);
}
