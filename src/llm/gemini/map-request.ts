/**
 * troupe's ModelRequest as a Gemini `generateContent` call: system messages go to
 * `systemInstruction`, the rest become `user`/`model` contents, tools become one
 * `functionDeclarations` tool with raw JSON Schema, and toolChoice becomes a function calling mode.
 */
import { FunctionCallingConfigMode, type Content, type GenerateContentConfig, type Part } from '@google/genai';
import { argumentsObject, base64 } from '../adapter-kit.js';
import type { ChatMessage, ModelRequest, NativeToolCall, ToolChoice } from '../types.js';
import type { GeminiThinking } from './gemini-thinking.js';
import { enforcesSignatures, SKIP_SIGNATURE, type ThoughtSignatures } from './thought-signatures.js';

/** `toolChoice` to Gemini's modes: `required` is ANY (call at least one function). */
const MODES: Record<Exclude<ToolChoice, object>, FunctionCallingConfigMode> = {
  auto: FunctionCallingConfigMode.AUTO,
  required: FunctionCallingConfigMode.ANY,
  none: FunctionCallingConfigMode.NONE,
};

/** Ids the adapter made up for calls Gemini sent without one (see `TurnReader`): never sent back. */
const GENERATED_ID = /^call_\d+$/;

/** What the mapping needs besides the request. */
export type MappingContext = { model: string; thinking?: GeminiThinking; signatures: ThoughtSignatures };

/** The `contents` and `config` of a `generateContent` / `generateContentStream` call. */
export function mapRequest(request: ModelRequest, context: MappingContext): { contents: Content[]; config: GenerateContentConfig } {
  const system = request.messages.filter((message) => message.role === 'system' && message.content !== '');
  const config: GenerateContentConfig = {
    // Plain declarations never trigger the client's automatic function calling; saying so keeps
    // its streaming path to one plain request.
    automaticFunctionCalling: { disable: true },
  };
  if (system.length > 0) config.systemInstruction = { parts: system.map((message) => ({ text: message.content })) };
  if (request.tools !== undefined && request.tools.length > 0) {
    config.tools = [
      {
        // `parametersJsonSchema` takes JSON Schema as written; `parameters` wants Gemini's
        // OpenAPI subset (upper-case types, no additionalProperties).
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
    const choice = request.toolChoice;
    // One named tool: ANY, with that function the only one allowed.
    if (typeof choice === 'object') config.toolConfig = { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: [choice.tool] } };
    else if (choice !== undefined) config.toolConfig = { functionCallingConfig: { mode: MODES[choice] } };
  }
  if (request.output !== undefined) {
    // `responseJsonSchema` takes JSON Schema as written, like `parametersJsonSchema`.
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = request.output.schema;
  }
  if (request.stop !== undefined && request.stop.length > 0) config.stopSequences = [...request.stop];
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  const thinking = context.thinking;
  if (thinking !== undefined && (thinking.budgetTokens !== undefined || thinking.includeThoughts !== undefined)) {
    config.thinkingConfig = {
      ...(thinking.budgetTokens !== undefined && { thinkingBudget: thinking.budgetTokens }),
      ...(thinking.includeThoughts !== undefined && { includeThoughts: thinking.includeThoughts }),
    };
  }
  return { contents: mapMessages(request.messages, context), config };
}

/**
 * The conversation as contents. Consecutive messages of one role share a content: the results
 * of a parallel batch go back together, as Gemini expects, and a user note after them joins them.
 */
function mapMessages(messages: readonly ChatMessage[], context: MappingContext): Content[] {
  const contents: Content[] = [];
  const signed = enforcesSignatures(context.model);
  // Multimodal function responses came with Gemini 3, the same models that enforce signatures.
  const multimodalResponses = signed;
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'model' : 'user';
    const parts = partsOf(message, context.signatures, signed, multimodalResponses);
    // Gemini refuses a content with no parts and a part with empty text.
    if (parts.length === 0) continue;
    const last = contents.at(-1);
    if (last !== undefined && last.role === role) last.parts!.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}

function partsOf(message: Exclude<ChatMessage, { role: 'system' }>, signatures: ThoughtSignatures, signed: boolean, multimodalResponses: boolean): Part[] {
  switch (message.role) {
    case 'user': {
      const parts: Part[] = message.content === '' ? [] : [{ text: message.content }];
      for (const image of message.images ?? []) parts.push({ inlineData: { mimeType: image.mediaType, data: base64(image.data) } });
      return parts;
    }
    case 'tool': {
      // Gemini reads `error` (rather than the output) as a call that did not succeed.
      const response: Part = { functionResponse: { name: message.name, response: message.failed === true ? { error: message.content } : { result: message.content } } };
      if (!GENERATED_ID.test(message.callId) && message.callId !== '') response.functionResponse!.id = message.callId;
      const images = message.images ?? [];
      if (images.length === 0) return [response];
      const blobs = images.map((image) => ({ mimeType: image.mediaType, data: base64(image.data) }));
      // Gemini 3 takes media inside the function response; earlier models only as parts of the
      // same user turn, right after it (Google's documented way before multimodal responses).
      if (multimodalResponses) {
        // A display name lets the model (and Google's `$ref` convention) tell the images apart.
        response.functionResponse!.parts = blobs.map((inlineData, index) => ({
          inlineData: { ...inlineData, displayName: `image-${index + 1}.${inlineData.mimeType.slice('image/'.length)}` },
        }));
        return [response];
      }
      return [response, ...blobs.map((inlineData): Part => ({ inlineData }))];
    }
    case 'assistant': {
      const parts: Part[] = message.content === '' ? [] : [{ text: message.content }];
      const calls = (message.toolCalls ?? []).map((call) => callPart(call, signatures));
      // A lost signature fails the whole request on Gemini 3: send the documented sentinel on the
      // first call of the batch (where Gemini puts the real one) unless a real one came back.
      if (signed && calls.length > 0 && !calls.some((part) => part.thoughtSignature !== undefined)) {
        calls[0]!.thoughtSignature = SKIP_SIGNATURE;
      }
      return [...parts, ...calls];
    }
  }
}

function callPart(call: NativeToolCall, signatures: ThoughtSignatures): Part {
  const part: Part = { functionCall: { name: call.name, args: argumentsObject(call.arguments) } };
  if (!GENERATED_ID.test(call.id) && call.id !== '') part.functionCall!.id = call.id;
  const signature = signatures.recall(call);
  if (signature !== undefined) part.thoughtSignature = signature;
  return part;
}
