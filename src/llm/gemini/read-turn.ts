/**
 * Gemini's answer back into troupe's shapes. One reader serves both calls: `complete` feeds it
 * the one response, `stream` feeds it each SSE chunk (each a GenerateContentResponse holding the
 * new parts), and `finish` builds the ModelResponse either way.
 */
import type { GenerateContentResponse, Part } from '@google/genai';
import { parseOutput } from '../../protocol/parse-output.js';
import { ResponseAssembler } from '../response-assembler.js';
import type { FinishReason, ModelRequest, StreamEvent } from '../types.js';
import type { ThoughtSignatures } from './thought-signatures.js';

/** Gemini's finish reasons, as troupe names them; anything not listed is `error`. */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
  IMAGE_RECITATION: 'content_filter',
  // MALFORMED_FUNCTION_CALL (the model wrote a call Gemini could not parse; no call is returned),
  // UNEXPECTED_TOOL_CALL, LANGUAGE and OTHER fall through to `error`.
};

const ACTION_CLOSER = '</ACTION>';

/** Reads one model turn from Gemini's response chunks. */
export class TurnReader {
  private readonly assembler = new ResponseAssembler();
  private readonly text: string[] = [];
  private calls = 0;
  private reason: string | undefined;
  private blocked = false;

  constructor(
    private readonly request: ModelRequest,
    private readonly signatures: ThoughtSignatures,
  ) {}

  /** True once Gemini said how the turn ended (a finish reason, or a blocked prompt). */
  get ended(): boolean {
    return this.reason !== undefined || this.blocked;
  }

  /** The events one response chunk stands for. */
  read(chunk: GenerateContentResponse): StreamEvent[] {
    const events: StreamEvent[] = [];
    if (chunk.promptFeedback?.blockReason !== undefined) this.blocked = true;
    const usage = chunk.usageMetadata;
    if (usage !== undefined) {
      const inputTokens = usage.promptTokenCount ?? 0;
      // Thinking is billed as output; Gemini counts it apart from the candidates.
      const outputTokens = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
      this.assembler.setUsage({ inputTokens, outputTokens, totalTokens: usage.totalTokenCount ?? inputTokens + outputTokens });
    }
    // troupe asks for one candidate (the default), so the first is the answer.
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      const event = this.part(part);
      if (event !== undefined) events.push(event);
    }
    if (candidate?.finishReason !== undefined) this.reason = String(candidate.finishReason);
    return events;
  }

  /** The `finish` event: the whole response, with the finish reason in troupe's terms. */
  finish(): StreamEvent & { type: 'finish' } {
    const reason = this.finishReason();
    return reason === 'stop_sequence' ? this.assembler.finish(reason, ACTION_CLOSER) : this.assembler.finish(reason);
  }

  private part(part: Part): StreamEvent | undefined {
    if (part.functionCall !== undefined) {
      const index = this.calls++;
      const { id, name, args } = part.functionCall;
      // Gemini sends each call whole; the Developer API often leaves `id` out.
      const call = { id: id || `call_${index + 1}`, name: name ?? '', arguments: argumentsText(args) };
      if (part.thoughtSignature !== undefined) this.signatures.remember(call, part.thoughtSignature);
      return this.assembler.wholeCall(index, call);
    }
    if (typeof part.text !== 'string') return undefined;
    if (part.thought === true) return this.assembler.reasoning(part.text);
    this.text.push(part.text);
    return this.assembler.text(part.text);
  }

  private finishReason(): FinishReason {
    if (this.reason === undefined) return this.blocked ? 'content_filter' : 'error';
    const reason = FINISH_REASONS[this.reason] ?? 'error';
    if (reason !== 'stop') return reason;
    if (this.calls > 0) return 'tool_calls';
    // Gemini strips a stop sequence but never says which one fired: an `<ACTION>` left open at a
    // normal stop, when `</ACTION>` was a stop sequence, is that sequence (docs/protocol.md rule 5).
    if (this.request.stop?.includes(ACTION_CLOSER) && parseOutput(this.text.join('')).problem?.category === 'unclosed_action') {
      return 'stop_sequence';
    }
    return 'stop';
  }
}

/**
 * A call's arguments as JSON text. Gemini sends an object; a string (as some proxies relay it) is
 * passed on exactly as sent, broken or not, for troupe to report.
 */
function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return args === undefined || args === null ? '{}' : JSON.stringify(args);
}
