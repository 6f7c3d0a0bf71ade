import type {
  LanguageModelV2Prompt,
  LanguageModelV2ToolResultOutput,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import { argumentsObject, base64 } from '../adapter-kit.js';
import type { ChatMessage, MessageImage } from '../types.js';
import type { AiSdkSpecification } from './language-model.js';

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/**
 * The history as an AI SDK prompt. System messages join into one at the front (several providers
 * refuse a system message after the conversation started); consecutive tool results go in one
 * tool message; a stored call's arguments go back as the object the specification wants.
 */
export function aiSdkPrompt(history: readonly ChatMessage[], specification: 'v3'): LanguageModelV3Prompt;
export function aiSdkPrompt(history: readonly ChatMessage[], specification: 'v2'): LanguageModelV2Prompt;
export function aiSdkPrompt(history: readonly ChatMessage[], specification: AiSdkSpecification): LanguageModelV3Prompt | LanguageModelV2Prompt;
export function aiSdkPrompt(history: readonly ChatMessage[], specification: AiSdkSpecification): LanguageModelV3Prompt | LanguageModelV2Prompt {
  const system: string[] = [];
  // Built as v3; v2 differs only in how a tool result carries images (see `toolOutput`), and its
  // parts are otherwise the same shapes, so the one list serves both.
  const prompt: LanguageModelV3Message[] = [];
  for (const message of history) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        prompt.push({ role: 'user', content: userContent(message.content, message.images) });
        break;
      case 'assistant':
        prompt.push({ role: 'assistant', content: assistantContent(message) });
        break;
      case 'tool': {
        const part = toolResult(message, specification);
        const last = prompt.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  if (system.length > 0) prompt.unshift({ role: 'system', content: system.join('\n\n') });
  return prompt;
}

function userContent(text: string, images: readonly MessageImage[] | undefined): Extract<LanguageModelV3Message, { role: 'user' }>['content'] {
  const content: Extract<LanguageModelV3Message, { role: 'user' }>['content'] = [];
  if (text !== '' || images === undefined || images.length === 0) content.push({ type: 'text', text });
  // The bytes themselves: each provider package encodes them the way its API wants.
  for (const image of images ?? []) content.push({ type: 'file', data: image.data, mediaType: image.mediaType });
  return content;
}

function assistantContent(message: Extract<ChatMessage, { role: 'assistant' }>): Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] {
  const calls = message.toolCalls ?? [];
  const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
  if (message.content !== '' || calls.length === 0) content.push({ type: 'text', text: message.content });
  for (const call of calls) {
    // The specification wants the input as an object; broken JSON the model wrote goes back as
    // `{}` (the tool result that follows already told the model what was wrong with it).
    content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: argumentsObject(call.arguments) });
  }
  return content;
}

function toolResult(message: ToolMessage, specification: AiSdkSpecification): LanguageModelV3ToolResultPart {
  return { type: 'tool-result', toolCallId: message.callId, toolName: message.name, output: toolOutput(message, specification) };
}

/**
 * A tool result's output: plain text (`error-text` for a call that failed, was rejected, denied
 * or withheld), or text and images as `content`. The image part is
 * `image-data` in v3 and `media` in v2, both base64 (the specification's own encoding there).
 */
function toolOutput(message: ToolMessage, specification: AiSdkSpecification): LanguageModelV3ToolResultOutput {
  const images = message.images ?? [];
  // The specification's own mark of a call that did not succeed (both v2 and v3 have it).
  if (message.failed === true && images.length === 0) return { type: 'error-text', value: message.content };
  if (images.length === 0) return { type: 'text', value: message.content };
  if (specification === 'v2') {
    const output: LanguageModelV2ToolResultOutput = {
      type: 'content',
      value: [{ type: 'text', text: message.content }, ...images.map((image) => ({ type: 'media' as const, data: base64(image.data), mediaType: image.mediaType }))],
    };
    // A v2 output inside the v3-shaped list: only this part differs, and only v2 models see it.
    return output as unknown as LanguageModelV3ToolResultOutput;
  }
  return {
    type: 'content',
    value: [{ type: 'text', text: message.content }, ...images.map((image) => ({ type: 'image-data' as const, data: base64(image.data), mediaType: image.mediaType }))],
  };
}
