import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, defineTool, scriptedProvider } from '../../src/index.js';
import { measure, type Row } from './measure.js';

/**
 * A new agent per run, each with its own scripted provider: `createAgent` + `run` (two model
 * rounds, one tool call, XML protocol), `createAgent` alone, and the Vercel AI SDK's
 * `generateText` doing the same exchange on its mock model, in the same process. The AI SDK is the
 * version this repository installs (6): version 7 needs Node 22.
 */

const parameters = { type: 'object', properties: { player_id: { type: 'string', maxLength: 16 } }, required: ['player_id'], additionalProperties: false } as const;
const CALL = '<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>';
const ANSWER = 'Player 7 is Ana.';
const roster: Record<string, { name: string }> = { '7': { name: 'Ana' } };

export async function benchCreateAgent(iterations: number): Promise<Row[]> {
  const lookup = defineTool({ name: 'lookup_player', description: 'Find a player by id.', parameters, readOnly: true, execute: ({ player_id }) => roster[player_id] ?? null });
  const tools = [lookup];

  const created = await measure('createAgent alone (own provider)', iterations, () => {
    createAgent({ name: 'bench', tools, provider: scriptedProvider([CALL, ANSWER]) });
  });
  const troupe = await measure('createAgent + run (2 rounds, 1 call, own provider)', iterations, async () => {
    const agent = createAgent({ name: 'bench', tools, provider: scriptedProvider([CALL, ANSWER]) });
    const result = await agent.run('Who is player 7?');
    if (result.reason !== 'final_answer') throw new Error(`bench run ended ${result.reason}`);
  });

  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  const aiTools = { lookup_player: tool({ description: 'Find a player by id.', inputSchema: jsonSchema<{ player_id: string }>({ type: 'object', properties: { player_id: { type: 'string', maxLength: 16 } }, required: ['player_id'], additionalProperties: false }), execute: async ({ player_id }) => roster[player_id] ?? null }) };
  const aiSdk = await measure('AI SDK 6 generateText, same exchange (mock model)', Math.ceil(iterations / 4), async () => {
    let round = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () =>
        round++ === 0
          ? { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup_player', input: '{"player_id":"7"}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
          : { content: [{ type: 'text', text: ANSWER }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    });
    const result = await generateText({ model, tools: aiTools, prompt: 'Who is player 7?', stopWhen: stepCountIs(2) });
    if (result.text !== ANSWER) throw new Error(`AI SDK run ended with ${JSON.stringify(result.text)}`);
  });
  const cpu = (row: Row): string => `CPU ${row.cpuUsPerOp!.toFixed(1)} µs/op`;
  return [
    { ...created, note: cpu(created) },
    {
      ...troupe,
      ratio: troupe.usPerOp / aiSdk.usPerOp,
      note: `${(aiSdk.usPerOp / troupe.usPerOp).toFixed(1)}× faster than the AI SDK row (CPU: ${(aiSdk.cpuUsPerOp! / troupe.cpuUsPerOp!).toFixed(1)}×); ${cpu(troupe)}; target ≤ 25 µs and ≥ 7×`,
    },
    { ...aiSdk, note: cpu(aiSdk) },
  ];
}
