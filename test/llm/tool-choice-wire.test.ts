import { describe, expect, it } from 'vitest';
import type { ModelRequest, ToolChoice } from '../../src/llm/types.js';
import { callOptions } from '../../src/llm/ai-sdk/call-options.js';
import { anthropicRequest } from '../../src/llm/anthropic/map-request.js';
import { ThinkingMemory } from '../../src/llm/anthropic/thinking-memory.js';
import { mapRequest } from '../../src/llm/gemini/map-request.js';
import { ThoughtSignatures } from '../../src/llm/gemini/thought-signatures.js';
import { chatRequest } from '../../src/llm/openai/chat-request.js';

const tools = [{ name: 'set_team', description: 'Move a player.', parameters: { type: 'object', properties: {} } }];
const request = (toolChoice: ToolChoice): ModelRequest => ({ messages: [{ role: 'user', content: 'Go.' }], tools, toolChoice, signal: new AbortController().signal, round: 1, agent: 'coach' });

/** Each provider's own words for each tool choice, as its official client sends them. */
describe('toolChoice on the wire', () => {
  it.each<[ToolChoice, unknown, unknown, unknown, unknown]>([
    ['auto', 'auto', { type: 'auto' }, { mode: 'AUTO' }, { type: 'auto' }],
    ['required', 'required', { type: 'any' }, { mode: 'ANY' }, { type: 'required' }],
    ['none', 'none', { type: 'none' }, { mode: 'NONE' }, { type: 'none' }],
    [{ tool: 'set_team' }, { type: 'function', function: { name: 'set_team' } }, { type: 'tool', name: 'set_team' }, { mode: 'ANY', allowedFunctionNames: ['set_team'] }, { type: 'tool', toolName: 'set_team' }],
  ])('%j', (choice, openai, anthropic, gemini, aiSdk) => {
    expect(chatRequest(request(choice), { model: 'gpt-4o', reasoningModel: false } as never).tool_choice).toEqual(openai);
    expect(anthropicRequest(request(choice), { model: 'claude', memory: new ThinkingMemory() } as never).tool_choice).toEqual(anthropic);
    expect(mapRequest(request(choice), { model: 'gemini-2.5-flash', signatures: new ThoughtSignatures() } as never).config.toolConfig).toEqual({ functionCallingConfig: gemini });
    expect(callOptions(request(choice), 'v3', {}, new AbortController().signal).toolChoice).toEqual(aiSdk);
  });
});
