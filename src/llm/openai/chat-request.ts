import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionUserMessageParam,
} from 'openai/resources/chat/completions';
import { base64 } from '../adapter-kit.js';
import type { ChatMessage, MessageImage, ModelRequest, ToolSpec } from '../types.js';

/** The body of a chat completion request, before `stream` is chosen (`stop` always a list). */
export type ChatRequestBody = Omit<ChatCompletionCreateParamsNonStreaming, 'stream' | 'stop'> & { stop?: string[] };

/** How the adapter words a request for this model (see `reasoningModel` on the provider's options). */
export type ChatRequestSettings = {
  model: string;
  /**
   * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5): they reject `max_tokens`, `stop` and a
   * non-default `temperature`, so the limit goes in `max_completion_tokens` and the other two are left out.
   */
  reasoningModel: boolean;
};

/**
 * Maps a troupe ModelRequest onto the Chat Completions body: messages, function tools,
 * `tool_choice` (the toolChoice string as is: `auto`, `required`, `none`), stop sequences, temperature, max tokens.
 */
export function chatRequest(request: ModelRequest, settings: ChatRequestSettings): ChatRequestBody {
  const body: ChatRequestBody = { model: settings.model, messages: chatMessages(request.messages) };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(functionTool);
    const choice = request.toolChoice;
    if (typeof choice === 'object') body.tool_choice = { type: 'function', function: { name: choice.tool } };
    else if (choice !== undefined) body.tool_choice = choice;
  }
  // Not `strict`: OpenAI's strict mode refuses schemas with optional properties; the agent validates anyway.
  if (request.output !== undefined) body.response_format = { type: 'json_schema', json_schema: { name: request.output.name, schema: request.output.schema } };
  if (request.maxTokens !== undefined) {
    // `max_tokens` is what every OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)
    // understands; OpenAI deprecated it, and its reasoning models refuse it with a 400.
    if (settings.reasoningModel) body.max_completion_tokens = request.maxTokens;
    else body.max_tokens = request.maxTokens;
  }
  if (!settings.reasoningModel) {
    // OpenAI accepts at most 4 stop sequences; troupe sends one (`</ACTION>`), so none are cut here.
    if (request.stop !== undefined && request.stop.length > 0) body.stop = [...request.stop];
    if (request.temperature !== undefined) body.temperature = request.temperature;
  }
  return body;
}

/**
 * The history as chat messages. Tool messages take text only, so images that came with tool
 * results go in one user message after the run of tool messages (the API wants every result of
 * an assistant's calls before any other message).
 */
function chatMessages(history: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [];
  let held: MessageImage[] = [];
  for (const message of history) {
    if (message.role !== 'tool' && held.length > 0) {
      messages.push(userMessage(TOOL_IMAGES, held));
      held = [];
    }
    if (message.role === 'tool' && message.images !== undefined) held.push(...message.images);
    messages.push(chatMessage(message));
  }
  if (held.length > 0) messages.push(userMessage(TOOL_IMAGES, held));
  return messages;
}

const TOOL_IMAGES = 'The images returned with the tool results above, in order.';

/** A user message: plain text, or a text part and one `image_url` part (a data URL) per image. */
function userMessage(text: string, images: readonly MessageImage[] | undefined): ChatCompletionUserMessageParam {
  if (images === undefined || images.length === 0) return { role: 'user', content: text };
  const parts: ChatCompletionContentPart[] = text === '' ? [] : [{ type: 'text', text }];
  for (const image of images) {
    parts.push({ type: 'image_url', image_url: { url: `data:${image.mediaType};base64,${base64(image.data)}` } });
  }
  return { role: 'user', content: parts };
}

function chatMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return userMessage(message.content, message.images);
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // With calls, an empty content goes as null: some servers refuse `""` beside tool_calls.
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          // Sent back exactly as the model wrote them, even when they were not valid JSON.
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case 'tool':
      // The wire has no tool name on a result: the call id links it to the assistant's call.
      return { role: 'tool', tool_call_id: message.callId, content: message.content };
  }
}

function functionTool(tool: ToolSpec): ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/**
 * Whether a model name is one of OpenAI's reasoning models, which take `max_completion_tokens`
 * and refuse `stop` and `temperature`: o1, o3, o4-mini and gpt-5 (with dated or provider-prefixed
 * names such as `openai/o3-mini` or `o4-mini-2025-04-16`). `gpt-5-chat` models are chat models.
 */
export function isReasoningModel(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  if (/^gpt-5(?:\.\d+)?-chat/.test(name)) return false;
  return /^o\d(?:$|-)/.test(name) || /^gpt-5(?:$|[.-])/.test(name);
}
