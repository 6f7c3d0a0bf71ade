import { safeJson } from '../bus/serialize-event.js';
import type { CallRejection, Issue, MalformedProblem } from '../protocol/types.js';
import type { MessageImage } from '../llm/types.js';
import type { CallResult } from '../tools/dispatch-calls.js';
import { formatBytes, imagesOf, isToolResult, sentImages, type ImagePart, type ToolResult } from '../tools/result-parts.js';

/** The user message that carries tool images to a provider whose tool results are text only. */
export const IMAGES_FOLLOW = 'The images attached to the tool results above, in order.';

/** A call of the turn as the model will hear about it. */
export type ObservedCall =
  | CallResult
  | { status: 'denied'; callId: string; name: string; reason: string }
  /** The call ran, but the host withheld its result (`needsResultApproval`). */
  | { status: 'result_rejected'; callId: string; name: string; reason: string };

/** A rejected call that the agent's repair fixed before it ran. */
export type RepairedNote = { callId: string; name: string; problem: string; after: { name: string; args: unknown } };

/** What happened in one round, for the observation. */
export type RoundReport =
  | { kind: 'malformed'; problem: MalformedProblem }
  | { kind: 'rejected'; rejection: CallRejection; callCount: number }
  | { kind: 'empty' }
  | { kind: 'uncalled'; tool?: string }
  | { kind: 'invalid_output'; issues: readonly Issue[] }
  | { kind: 'calls'; calls: ObservedCall[]; repaired?: RepairedNote };

export type ObservationOptions = {
  /** Characters of one output shown before the cut marker. */
  maxOutputChars: number;
  /**
   * Whether the images of rich results go to the model with the observation (`attached`) or
   * only as their placeholders (`omitted`, the default: the provider takes no images).
   */
  images?: 'attached' | 'omitted';
  /** How the model writes calls: the wording of a correction follows it (default `xml`). */
  protocol?: 'xml' | 'native';
};

/** The text of one observation, plus whether the turn went as the model meant. */
export type Observation = { text: string; ok: boolean };

const FORMAT_REMINDER =
  'Write one block: <ACTION><tool_name><param>value</param></tool_name></ACTION>, or answer in plain text with no block when you are done.';
const FORMAT_CALL = 'Write one block: <ACTION><tool_name><param>value</param></tool_name></ACTION>.';
const NATIVE_REMINDER = 'Call the tools again with valid arguments, or answer in plain text with no tool call when you are done.';

/** The words of a correction, by how the model writes its calls. */
const WORDING = {
  xml: {
    unreadable: 'Your <ACTION> block could not be read',
    rejected: 'Your <ACTION> block was rejected',
    again: 'Fix the call and send the whole block again.',
    reminder: FORMAT_REMINDER,
  },
  native: {
    unreadable: 'Your tool calls could not be read',
    rejected: "This round's tool calls were rejected",
    again: "Fix the call and make this round's calls again.",
    reminder: NATIVE_REMINDER,
  },
} as const;

/**
 * The observation for one turn: one line per call naming its outcome, tool output quoted. Quoting
 * neutralises anything that could read as markup (`<ACTION>`, `</OBSERVATION>`, `]]>`) and makes
 * bidi and control characters visible, so a result can never pose as a call or end the block.
 */
export function observationText(outcome: RoundReport, options: ObservationOptions): Observation {
  const words = WORDING[options.protocol ?? 'xml'];
  switch (outcome.kind) {
    case 'malformed':
      return {
        ok: false,
        text: `${words.unreadable} (${outcome.problem.category}): ${quote(outcome.problem.message)}\nNothing ran. ${words.reminder}`,
      };
    case 'rejected': {
      const { rejection, callCount } = outcome;
      const lines = [
        `${words.rejected}; nothing ran (${callCount === 1 ? 'its only call' : `none of its ${callCount} calls`}).`,
        `${rejection.name} (${rejection.callId}): ${rejection.category}: ${quote(rejection.message)}`,
      ];
      for (const issue of rejection.issues.slice(1)) lines.push(`- ${quote(issue.message)}`);
      lines.push(words.again);
      return { ok: false, text: lines.join('\n') };
    }
    case 'empty':
      return {
        ok: false,
        text: `Your reply was empty. ${words.reminder}`,
      };
    case 'uncalled':
      return {
        ok: false,
        text: `A tool call is required now, and your reply made none. ${outcome.tool === undefined ? 'Call one of your tools.' : `Call ${outcome.tool}.`}${options.protocol === 'native' ? '' : ` ${FORMAT_CALL}`}`,
      };
    case 'invalid_output': {
      const [first, ...rest] = outcome.issues;
      const lines = [`Your final answer does not fit the output schema: ${quote(first?.message ?? 'it is not valid')}`, ...rest.map((issue) => `- ${quote(issue.message)}`)];
      lines.push('Answer again with only the corrected JSON.');
      return { ok: false, text: lines.join('\n') };
    }
    case 'calls': {
      const parts = outcome.calls.map((call) => describeCall(call, options));
      if (outcome.repaired !== undefined) parts.unshift(repairNote(outcome.repaired));
      return { ok: outcome.calls.every((call) => call.status === 'completed'), text: parts.join('\n\n') };
    }
  }
}

/** The text of one call's outcome (used alone for native tool messages). */
export function describeCall(call: ObservedCall, options: ObservationOptions): string {
  const head = `${call.name} (${call.callId})`;
  switch (call.status) {
    case 'completed':
      if (isToolResult(call.output)) return `${head} completed:\n${quoteResult(call.output, call.callId, options)}`;
      return `${head} completed:\n${quoteOutput(call.output, call.callId, options.maxOutputChars)}`;
    case 'failed': {
      const { kind, message, retryable, hint } = call.error;
      const tried = call.attempts > 1 ? ` after ${call.attempts} attempts` : '';
      return (
        `${head} failed${tried} [${kind}${retryable ? ', retryable' : ''}]: ${quote(message)}` +
        (hint === undefined ? '' : `\nHint: ${quote(hint)}`)
      );
    }
    case 'denied':
      return `${head} was denied by the operator and did not run: ${quote(call.reason)}`;
    case 'result_rejected':
      return `${head} ran, but its result was withheld: RESULT_REJECTED: ${quote(call.reason)}`;
  }
}

/** Tells the model its call was fixed before it ran, and how, so it writes it right next time. */
export function repairNote(note: RepairedNote): string {
  const after = plainJson(note.after.args, 500) ?? '(arguments too long to show)';
  const renamed = note.after.name === note.name ? '' : ` as ${note.after.name}`;
  return `Note: ${note.name} (${note.callId}) was rejected (${quote(note.problem)}) and repaired before it ran${renamed}, with arguments ${quote(after)}. Write calls that way next time.`;
}

function quoteOutput(output: unknown, callId: string, maxChars: number): string {
  let text: string;
  let total: number;
  if (typeof output === 'string') {
    total = output.length;
    text = total > maxChars ? output.slice(0, maxChars) : output;
  } else if (output === undefined) {
    return '(no output)';
  } else {
    const plain = plainJson(output, maxChars);
    if (plain !== undefined) return quote(plain);
    const serialized = safeJson(output, { maxChars: maxChars + 1 });
    total = serialized.truncated ? Number.POSITIVE_INFINITY : serialized.text.length;
    text = serialized.text.length > maxChars ? serialized.text.slice(0, maxChars) : serialized.text;
  }
  const quoted = quote(text);
  if (total <= maxChars) return quoted;
  const of = Number.isFinite(total) ? ` of ${total.toLocaleString('en-US')}` : '';
  return `${quoted}\n[output cut at ${maxChars.toLocaleString('en-US')}${of} characters; the full value is in the tool.completed event of ${callId}]`;
}

/**
 * A rich result: text parts quoted as text, JSON parts as JSON text, each image as a placeholder
 * line that names it. Text and JSON share the output budget in order; placeholders always show,
 * so a long text never hides that an image came back.
 */
function quoteResult(result: ToolResult, callId: string, options: ObservationOptions): string {
  const lines: string[] = [];
  let room = options.maxOutputChars;
  let cut = false;
  let image = 0;
  const count = imagesOf(result).length;
  for (const part of result.parts) {
    if (part.type === 'image') {
      image++;
      lines.push(imagePlaceholder(part, image, count, options.images === 'attached'));
      continue;
    }
    const text = part.type === 'text' ? part.text : JSON.stringify(part.value);
    if (room <= 0) {
      cut ||= text.length > 0;
      continue;
    }
    if (text.length > room) cut = true;
    lines.push(quote(text.length > room ? text.slice(0, room) : text));
    room -= text.length;
  }
  if (cut) lines.push(`[output cut at ${options.maxOutputChars.toLocaleString('en-US')} characters; the full parts are in the tool.completed event of ${callId}]`);
  return lines.length === 0 ? '(no output)' : lines.join('\n');
}

/** `[image 1 of 2: image/png, 12.3 KB, ref sha256:0a1b2c3d4e5f; attached]` */
function imagePlaceholder(part: ImagePart, index: number, count: number, attached: boolean): string {
  const which = count > 1 ? `image ${index} of ${count}` : 'image';
  const ref = part.sha256 === undefined ? '' : `, ref sha256:${part.sha256.slice(0, 12)}`;
  const where = attached ? 'attached' : 'not shown: this model is not sent images';
  return `[${which}: ${part.mediaType}, ${formatBytes(part.data.byteLength)}${ref}; ${where}]`;
}

/**
 * The images a call's rich result sends the model, in order (none for any other outcome): the
 * checked result's own copies, not the `data` subscribers were handed.
 */
export function callImages(call: ObservedCall): MessageImage[] {
  if (call.status !== 'completed' || !isToolResult(call.output)) return [];
  return sentImages(call.output);
}

/**
 * JSON.stringify's text when it succeeds and is short. Cycles, BigInt and throwing `toJSON`
 * throw and go to `safeJson`; functions and symbols are left out, as JSON leaves them out (the
 * session log still records them as `[Function name]`).
 */
function plainJson(output: unknown, maxChars: number): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(output);
  } catch {
    return undefined;
  }
  return text === undefined || text.length > maxChars ? undefined : text;
}

// `<` that could open a tag, `]]>`, and the characters that reorder or hide text.
const UNSAFE = /<(?=[A-Za-z/!?])|]]>|[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g;

/** Quotes untrusted text for an observation: markup neutralised, invisible characters shown. */
export function quote(text: string): string {
  return text.replace(UNSAFE, (match) => {
    if (match === '<') return '&lt;';
    if (match === ']]>') return ']]&gt;';
    return `\\u${match.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`;
  });
}

/** Wraps observation text in the runtime-owned `<OBSERVATION>` element (XML protocol). */
export function wrapObservation(text: string): string {
  return `<OBSERVATION>\n${text}\n</OBSERVATION>`;
}
