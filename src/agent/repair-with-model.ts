import type { ChatMessage, Provider } from '../llm/types.js';
import type { RepairedCall, RepairFunction } from './agent-options.js';

/** The options of `repairWithModel`. */
export type RepairWithModelOptions = {
  /** The model that repairs (default: the agent's own provider). A small, cheap one does. */
  provider?: Provider;
  /** A cap on the reply (default 1,024 tokens): a repaired call is short. */
  maxTokens?: number;
};

const SYSTEM =
  'You repair one tool call that was rejected. Reply with one JSON object and nothing else: ' +
  '{"name": "<tool name>", "arguments": { ... }}. Use only the tools listed and keep what the call meant. ' +
  'If the call cannot be repaired, reply null.';

/**
 * A repair that makes one extra model call: it shows the model the tools, the rejected call and
 * the problems, and reads back one JSON call. What comes back is validated like any call, so a
 * wrong repair is only a failed one (`tool.repair.failed`).
 *
 * @example
 * const agent = createAgent({ name: 'clerk', tools, provider, repair: repairWithModel({ provider: small }) });
 */
export function repairWithModel(options: RepairWithModelOptions = {}): RepairFunction {
  const maxTokens = options.maxTokens ?? 1_024;
  return async (rejection, context) => {
    const { call } = context;
    const wrote = call.argumentsText !== undefined && Object.keys(call.args).length === 0 ? call.argumentsText : JSON.stringify(call.args);
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM },
      {
        role: 'user',
        content: [
          `Tools:\n${JSON.stringify(context.tools)}`,
          `The call (${call.format === 'xml' ? 'XML argument texts' : 'JSON arguments'}): ${JSON.stringify(call.name)} with ${wrote}`,
          `Problems:\n${rejection.issues.map((issue) => `- ${issue.message}`).join('\n') || `- ${rejection.message}`}`,
        ].join('\n\n'),
      },
    ];
    const response = await context.complete(messages, { ...(options.provider !== undefined && { provider: options.provider }), maxTokens });
    return readCall(typeof response?.text === 'string' ? response.text : '');
  };
}

/** The call in the model's reply: the first complete JSON object, code fences allowed; `null` declines. */
function readCall(text: string): RepairedCall | undefined {
  const unfenced = text.replace(/^\s*```(?:json)?\s*|\s*```\s*$/g, '').trim();
  if (unfenced === 'null') return undefined;
  const value = firstJsonObject(unfenced);
  if (typeof value !== 'object' || value === null) throw new Error(`the model's reply was not a JSON call: ${JSON.stringify(text.slice(0, 200))}`);
  const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new Error('the model\'s reply has no "arguments" object');
  return typeof name === 'string' ? { name, args: args as Record<string, unknown> } : { args: args as Record<string, unknown> };
}

/**
 * The first `{…}` of the text that parses as JSON: braces are balanced, those inside strings
 * (escapes included) do not count, so prose before or after it, even with braces, is ignored.
 */
function firstJsonObject(text: string): unknown {
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    const end = balancedEnd(text, start);
    // A brace that never closes (prose) hides nothing: a later one may still open the call.
    if (end === -1) continue;
    try {
      return JSON.parse(text.slice(start, end + 1));
    } catch {
      // Not JSON after all (`{azure}` in prose): try the next brace.
    }
  }
  return undefined;
}

/** Where the object opened at `start` closes, or -1 when it never does. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return index;
  }
  return -1;
}
