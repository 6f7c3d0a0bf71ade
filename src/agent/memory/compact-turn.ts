import { safeJson } from '../../bus/serialize-event.js';
import type { ObservedCall } from '../observation-text.js';
import { quote } from '../observation-text.js';
import { textOf } from './variables.js';

/** One round of a run as compact history keeps it: what the model said, what its calls did. */
export type ChainStep = {
  /** The visible text the model wrote this round (before its `<ACTION>` block). */
  text: string;
  calls: readonly ChainCall[];
};

/** A call of the chain: its outcome and, when it completed, the variable holding its result. */
export type ChainCall = { call: ObservedCall; args: unknown; ref?: string };

/** How long arguments and result previews get in an execution-log line. */
export type CompactLimits = { argsChars: number; previewChars: number };

/** Marks the lines the runtime writes, so the model neither trusts them as its own nor imitates them. */
export const LOG_MARK = '[tool log]';

/**
 * The one assistant message a finished tool chain becomes in compact history: a short system hint naming the executed tools and the variables holding
 * their results, then the visible text of each round with one execution-log line per call
 * (arguments and a result preview, both cut). Tool output is quoted, as in observations, so a
 * result can never pose as a call.
 */
export function compactTurn(steps: readonly ChainStep[], limits: CompactLimits): string {
  const calls = steps.flatMap((step) => step.calls);
  const parts: string[] = [];
  if (calls.length > 0) {
    const executed = calls.map(({ call, ref }) => `- ${call.name} (${call.callId}) → ${ref ?? call.status}`);
    parts.push(
      [
        '<SYSTEM-CONTEXT>',
        'Tool results of this turn are stored in variables; read one with the read_var tool (ref, offset, length).',
        'Executed tools:',
        ...executed,
        `Lines starting with ${LOG_MARK} were written by the runtime, not by you; never write them yourself.`,
        '</SYSTEM-CONTEXT>',
        '---',
      ].join('\n'),
    );
  }
  for (const step of steps) {
    const lines: string[] = [];
    if (step.text !== '') lines.push(step.text);
    for (const entry of step.calls) lines.push(logLine(entry, limits));
    if (lines.length > 0) parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}

function logLine({ call, args, ref }: ChainCall, limits: CompactLimits): string {
  const head = `${LOG_MARK} ${call.name} ${quote(cut(safeJson(args, { maxChars: limits.argsChars + 1 }).text, limits.argsChars))}`;
  switch (call.status) {
    case 'completed': {
      const text = textOf(call.output);
      const where = ref === undefined ? '' : ` in ${ref}`;
      return `${head} → completed, ${text.length.toLocaleString('en-US')} characters${where}: ${quote(oneLine(cut(text, limits.previewChars)))}`;
    }
    case 'failed':
      return `${head} → failed [${call.error.kind}]: ${quote(oneLine(cut(call.error.message, limits.previewChars)))}`;
    case 'denied':
      return `${head} → denied: ${quote(oneLine(cut(call.reason, limits.previewChars)))}`;
    case 'result_rejected':
      // The model never saw the result: the log keeps only why it was withheld.
      return `${head} → result withheld: ${quote(oneLine(cut(call.reason, limits.previewChars)))}`;
  }
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ');
}
