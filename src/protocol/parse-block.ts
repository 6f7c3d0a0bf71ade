/**
 * The inside of one `<ACTION>` block (docs/protocol.md rules 6–8): size, characters, then structure,
 * into raw calls. Names are not looked up here; that is the validate stage.
 */
import { failure, success, type Outcome } from '../outcome.js';
import { scanChildren } from './xml-elements.js';
import { findForbiddenCharacter } from './xml-chars.js';
import type { MalformedProblem, ProtocolLimits, RawArgument, RawCall } from './types.js';

/** Where a block sits in the model output; all offsets are positions in the output. */
export type BlockSpan = {
  /** The opener's `<`. */
  start: number;
  /** Just after the opener's `>`. */
  innerStart: number;
  /** The closer's `<`, or the end of the output when the provider stripped the closer. */
  innerEnd: number;
  /** Just after the closer's `>` (equal to `innerEnd` when there is no closer). */
  end: number;
  /** The opener had attributes (`<ACTION id="1">`). */
  attributes: boolean;
  /** The opener was `<ACTION/>`. */
  selfClosing: boolean;
  /** A second opener between opener and closer (nested ACTION), or -1. */
  nestedAt: number;
};

/** What `parseBlock` needs besides the block: the limits and how to name calls. */
export type ParseBlockOptions = { limits: ProtocolLimits; callId: (index: number) => string };

/**
 * Parses one block into its calls: size over `maxActionChars` → `limit_exceeded`, a character
 * XML forbids → `invalid_character`, then the structure with the first problem in document
 * order winning (`attributes_not_supported`, `malformed_xml`, `doctype_forbidden`,
 * `malformed_call`, `empty_action`, `limit_exceeded`).
 *
 * @param blockText the output from `block.start` to `block.end`
 */
export function parseBlock(blockText: string, block: BlockSpan, options: ParseBlockOptions): Outcome<RawCall[], MalformedProblem> {
  return parseBlockIn(blockText, block.start, block, options);
}

/**
 * `parseBlock` reading the block from a text that holds it, where `text[index]` is at offset
 * `shift + index` of the output: the whole output (shift 0) needs no slice.
 */
export function parseBlockIn(text: string, shift: number, block: BlockSpan, options: ParseBlockOptions): Outcome<RawCall[], MalformedProblem> {
  const { limits } = options;
  const size = block.end - block.start;
  if (size > limits.maxActionChars) {
    return failure({
      category: 'limit_exceeded',
      message: `The <ACTION> block is ${size} characters long; the limit is ${limits.maxActionChars}. Split the work into smaller calls.`,
      offset: block.start,
    });
  }
  const bad = findForbiddenCharacter(text, block.start - shift, block.end - shift);
  if (bad >= 0) {
    const code = text.charCodeAt(bad).toString(16).toUpperCase().padStart(4, '0');
    return failure({
      category: 'invalid_character',
      message: `The <ACTION> block contains U+${code}, a character XML does not allow (a control character, U+FFFE/U+FFFF or a lone surrogate).`,
      offset: shift + bad,
    });
  }
  const structure = parseStructure(text, shift, block, options);
  // A nested opener is a problem at its own position; whatever comes first in the text wins.
  if (block.nestedAt >= 0 && (structure.ok || (structure.problem.offset ?? 0) >= block.nestedAt)) {
    return failure({
      category: 'malformed_xml',
      message: 'A second <ACTION> opens before the first is closed; ACTION blocks cannot nest. Close the block with </ACTION> first.',
      offset: block.nestedAt,
    });
  }
  return structure;
}

function parseStructure(text: string, shift: number, block: BlockSpan, options: ParseBlockOptions): Outcome<RawCall[], MalformedProblem> {
  const { limits } = options;
  if (block.attributes) {
    return failure({
      category: 'attributes_not_supported',
      message: 'Attributes are not supported on <ACTION>; write a bare <ACTION> opener.',
      offset: block.start,
    });
  }
  if (block.selfClosing) return failure(emptyAction(block.start));

  const top = scanChildren(text, block.innerStart - shift, block.innerEnd - shift, shift);
  // Calls before the block-level problem come first in the text, so their problems win.
  const topProblem: MalformedProblem | undefined =
    top.problem ??
    (top.strayOffset >= 0
      ? {
          category: 'malformed_call',
          message: 'Text inside <ACTION> outside any call element. Put each call in its own element (<tool_name>…</tool_name>) and write prose before <ACTION>.',
          offset: top.strayOffset,
        }
      : undefined);

  const calls: RawCall[] = [];
  const elements = top.elements;
  for (let index = 0; index < elements.length; index++) {
    const element = elements[index] as RawArgument;
    if (topProblem !== undefined && element.offset > (topProblem.offset ?? 0)) break;
    if (index >= limits.maxCallsPerAction) {
      return failure({
        category: 'limit_exceeded',
        message: `The block has more than ${limits.maxCallsPerAction} calls; send at most ${limits.maxCallsPerAction} per block.`,
        offset: element.offset,
      });
    }
    const args = parseCall(text, shift, element, limits);
    if (!args.ok) return args;
    calls.push({ format: 'xml', callId: options.callId(index), name: element.name, args: args.value, offset: element.offset });
  }
  if (topProblem !== undefined) return failure(topProblem);
  if (calls.length === 0) return failure(emptyAction(block.innerEnd));
  return success(calls);
}

/** The argument elements of one call element (depth 1; its arguments are at depth 2). */
function parseCall(text: string, shift: number, element: RawArgument, limits: ProtocolLimits): Outcome<RawArgument[], MalformedProblem> {
  if (limits.maxDepth < 1) return failure(tooDeep(element.offset, limits.maxDepth));
  if (element.selfClosing) return success([]);
  const innerStart = element.innerOffset - shift;
  const scanned = scanChildren(text, innerStart, innerStart + element.raw.length, shift);
  const args = scanned.elements;
  if (args.length > 0 && limits.maxDepth < 2) return failure(tooDeep((args[0] as RawArgument).offset, limits.maxDepth));
  if (scanned.problem !== undefined) return failure(scanned.problem);
  if (scanned.strayOffset >= 0) {
    return failure({
      category: 'malformed_call',
      message: `Text inside <${element.name}> outside any argument element. Put each argument in its own element (<name>value</name>).`,
      offset: scanned.strayOffset,
    });
  }
  return success(args);
}

function emptyAction(offset: number): MalformedProblem {
  return {
    category: 'empty_action',
    message: 'The <ACTION> block has no calls. Put one element per call inside it, or leave the block out to answer in text.',
    offset,
  };
}

function tooDeep(offset: number, maxDepth: number): MalformedProblem {
  return {
    category: 'limit_exceeded',
    message: `Elements nest deeper than the depth limit of ${maxDepth} (ACTION = 0, call = 1, argument = 2).`,
    offset,
  };
}
