/**
 * The last step of the block finder: from what the scan found (opener, closer, a second block, a
 * fenced example) to the result, applying rules 4–5 and handing the block to `parseBlock`.
 */
import type { FinishReason } from '../llm/types.js';
import type { ChunkText } from './chunk-text.js';
import { parseBlockIn, type BlockSpan } from './parse-block.js';
import type { ResolvedParseOptions } from './parse-options.js';
import type { MalformedProblem, ParsedOutput, RawCall } from './types.js';
import { trimAscii, trimAsciiRange } from './visible-text.js';

/** What a finished scan found; positions are offsets in the output, -1 when absent. */
export type ScanFacts = {
  output: ChunkText;
  visibleText: string;
  openerStart: number;
  openerEnd: number;
  openerAttributes: boolean;
  openerSelfClosing: boolean;
  closerStart: number;
  closerEnd: number;
  nestedAt: number;
  secondOpenerAt: number;
  exampleSeen: boolean;
};

/** Turns scan facts into the parse result (rules 4–8), in the order docs/protocol.md gives (rule 8). */
export function concludeScan(
  facts: ScanFacts,
  options: ResolvedParseOptions,
  finishReason: FinishReason | undefined,
  stopSequence: string | undefined,
): ParsedOutput {
  const text = facts.visibleText;
  const length = facts.output.length;
  if (facts.openerStart < 0) {
    if (!facts.exampleSeen) return { text, calls: [], hasBlock: false };
    return {
      text,
      calls: [],
      hasBlock: false,
      problem: {
        category: 'action_in_code_fence',
        message: 'The <ACTION> block is inside a code fence, so it was not run. Write the block outside any ``` fence to call tools.',
      },
    };
  }
  let innerEnd = facts.closerStart;
  let end = facts.closerEnd;
  if (end < 0) {
    // The provider stripped `</ACTION>` as a stop sequence: the block runs to the end (rule 5).
    const stripped = finishReason === 'stop_sequence' && (stopSequence ?? '').trim().toLowerCase() === '</action>';
    if (!stripped) {
      const cut = finishReason === 'length' ? ' The output was cut off by the length limit.' : '';
      return {
        text,
        calls: [],
        hasBlock: true,
        problem: {
          category: 'unclosed_action',
          message: `The <ACTION> block is not closed, so nothing ran.${cut} End the block with </ACTION>.`,
          offset: facts.openerStart,
        },
      };
    }
    innerEnd = length;
    end = length;
  }
  const whole = facts.output.single();
  const trailing = end >= length ? '' : whole === undefined ? trimAscii(facts.output.slice(end, length)) : trimAsciiRange(whole, end, length);
  if (facts.secondOpenerAt >= 0) {
    return withBlock(text, [], trailing, {
      category: 'multiple_action_blocks',
      message: 'The output has more than one <ACTION> block, so nothing ran. Put every call of this turn in one block.',
      offset: facts.secondOpenerAt,
    });
  }
  const block: BlockSpan = {
    start: facts.openerStart,
    innerStart: facts.openerEnd,
    innerEnd: facts.openerSelfClosing ? facts.openerEnd : innerEnd,
    end,
    attributes: facts.openerAttributes,
    selfClosing: facts.openerSelfClosing,
    nestedAt: facts.nestedAt,
  };
  // A batch parse reads the block in place; a stream reads one flat copy of it.
  const parsed =
    whole === undefined ? parseBlockIn(facts.output.slice(block.start, block.end), block.start, block, options) : parseBlockIn(whole, 0, block, options);
  return parsed.ok ? withBlock(text, parsed.value, trailing, undefined) : withBlock(text, [], trailing, parsed.problem);
}

/** The result for an output with a block; `trailing` and `problem` only when there are some. */
function withBlock(text: string, calls: RawCall[], trailing: string, problem: MalformedProblem | undefined): ParsedOutput {
  const result: ParsedOutput = { text, calls, hasBlock: true };
  if (trailing !== '') result.trailing = trailing;
  if (problem !== undefined) result.problem = problem;
  return result;
}
