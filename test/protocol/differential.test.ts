import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseOutput } from '../../src/protocol/parse-output.js';
import type { ParsedOutput } from '../../src/protocol/types.js';
import { modelOutput } from './fragments.js';
import { guardPrototype } from './helpers.js';
import { parseReference } from './reference-scanner.js';

guardPrototype();

/** Results without the wording of messages. */
function comparable(parsed: ParsedOutput): unknown {
  const { problem, ...rest } = parsed;
  return { ...rest, ...(problem && { problem: { category: problem.category, offset: problem.offset } }) };
}

const spanHeavy = fc
  .array(fc.constantFrom('`', '``', '```', 'a', ' ', '\n', '\n\n', '<ACTION><go/></ACTION>', '<think>', '</think>', '~~~', '```x`', '  ```'), {
    maxLength: 30,
  })
  .map((parts) => parts.join(''));

describe('the linear scanner agrees with a naive reference', () => {
  it.each([
    ['realistic fragments', modelOutput],
    ['backtick-heavy text', spanHeavy],
  ])('%s', (_label, outputs) => {
    fc.assert(
      fc.property(outputs, fc.constantFrom(undefined, '</ACTION>'), (output, stopSequence) => {
        const finish = stopSequence === undefined ? {} : { finishReason: 'stop_sequence' as const, stopSequence };
        expect(comparable(parseOutput(output, finish))).toEqual(comparable(parseReference(output, finish)));
      }),
      { numRuns: 500 },
    );
  });
});
