import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createActionScanner, parseOutput } from '../../src/protocol/parse-output.js';
import type { FinishReason } from '../../src/llm/types.js';
import { cut, modelOutput } from './fragments.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

const finish = fc.record({
  finishReason: fc.constantFrom<FinishReason | undefined>(undefined, 'stop', 'length', 'stop_sequence'),
  stopSequence: fc.constantFrom<string | undefined>(undefined, '</ACTION>', 'END'),
});

function stream(chunks: string[], end: { finishReason?: FinishReason; stopSequence?: string }) {
  const scanner = createActionScanner();
  const deltas: string[] = [];
  let closedAt = -1;
  for (const [index, chunk] of chunks.entries()) {
    const progress = scanner.push(chunk);
    deltas.push(progress.visible);
    if (progress.closed && closedAt < 0) closedAt = index;
  }
  const last = scanner.finish(end);
  deltas.push(last.visible);
  return { parsed: last.parsed, deltas, closedAt };
}

describe('streaming ≡ batch', () => {
  it('gives exactly the batch result for any chunking, and the deltas add up to the text', () => {
    fc.assert(
      fc.property(modelOutput, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), finish, (output, cuts, end) => {
        const batch = parseOutput(output, end);
        const { parsed, deltas } = stream(cut(output, cuts), end);
        expect(parsed).toEqual(batch);
        expect(deltas.join('')).toBe(batch.text);
      }),
      { numRuns: 500 },
    );
  });

  it('one character at a time gives the batch result', () => {
    fc.assert(
      fc.property(modelOutput, (output) => {
        const { parsed, deltas } = stream([...output], {});
        expect(parsed).toEqual(parseOutput(output));
        expect(deltas.join('')).toBe(parsed.text);
      }),
      { numRuns: 300 },
    );
  });

  it('gives the batch result for text without `<` (which batch parsing settles without the scanner)', () => {
    const proseOnly = fc.array(fc.constantFrom('`', '```', '~~~', ' ', '   ', '\t', '\n', '\n\n', 'a', 'word ', '>', '!', '\r\n'), { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(proseOnly, (output) => {
        const { parsed, deltas } = stream([...output], {});
        expect(parsed).toEqual(parseOutput(output));
        expect(parsed).toEqual({ text: output.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ''), calls: [], hasBlock: false });
        expect(deltas.join('')).toBe(parsed.text);
      }),
      { numRuns: 300 },
    );
  });

  it('reads `<` before other letters as text in any chunking', () => {
    const tagSoup = fc.array(fc.constantFrom('<b>', '</b>', '<', '<<', '<t', '<o', '<a', '<A', '<!', '<!-', '<x', 'a < b', '`', '\n', ' ', '<ACTION>', '<go/>', '</ACTION>'), { maxLength: 30 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(tagSoup, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), (output, cuts) => {
        const batch = parseOutput(output);
        const { parsed, deltas } = stream(cut(output, cuts), {});
        expect(parsed).toEqual(batch);
        expect(deltas.join('')).toBe(batch.text);
        expect(stream([...output], {}).parsed).toEqual(batch);
      }),
      { numRuns: 300 },
    );
  });

  it('reports closed once the closer has arrived, never before', () => {
    fc.assert(
      fc.property(modelOutput, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), (output, cuts) => {
        const chunks = cut(output, cuts);
        const { closedAt } = stream(chunks, {});
        if (closedAt < 0) return;
        // The prefix up to the chunk that closed has a complete block; the prefix before it does not.
        const upTo = chunks.slice(0, closedAt + 1).join('');
        const before = chunks.slice(0, closedAt).join('');
        const closedPrefix = stream([upTo], {}).closedAt;
        expect(closedPrefix).toBe(0);
        expect(stream([before], {}).closedAt).toBe(-1);
      }),
      { numRuns: 200 },
    );
  });

  it('streams the visible text of a realistic turn before the block arrives', () => {
    const scanner = createActionScanner();
    const seen: string[] = [];
    for (const chunk of ['I will ', 'read the ', 'file `a.ts`', '.\n\n<ACT', 'ION>\n<read_file><path>a.ts</path></read_file>\n</ACTION>']) {
      seen.push(scanner.push(chunk).visible);
    }
    expect(seen).toEqual(['I will', ' read the', ' file `a.ts`', '.', '']);
    expect(scanner.end().calls).toHaveLength(1);
  });
});

describe('small chunks (the path that skips the machine)', () => {
  /** Long plain stretches, so that chunks skip the machine for thousands of characters at a time. */
  const filler = fc
    .array(fc.constantFrom('The innkeeper nods. ', 'two ales', 'é', '😀', ']', ']]', '-', '--', ' ', '\t', '>', '&', 'x'), { minLength: 200, maxLength: 700 })
    .map((parts) => parts.join(''));
  const longOutput = fc
    .array(fc.oneof({ weight: 1, arbitrary: modelOutput }, { weight: 1, arbitrary: filler }), { minLength: 2, maxLength: 12 })
    .map((parts) => parts.join(''));
  /** Chunk lengths around the limits of the fast path: one character, a few, and longer than a short chunk. */
  const chunkLengths = fc.array(fc.constantFrom(1, 1, 1, 2, 3, 4, 4, 7, 64, 65, 300), { minLength: 1, maxLength: 20 });

  function chunked(output: string, lengths: readonly number[]): string[] {
    const chunks: string[] = [];
    for (let at = 0, index = 0; at < output.length; index++) {
      const length = lengths[index % lengths.length] as number;
      chunks.push(output.slice(at, at + length));
      at += length;
    }
    return chunks;
  }

  it('gives the batch result for long outputs in small chunks, across the staging buffer', () => {
    fc.assert(
      fc.property(longOutput, chunkLengths, finish, (output, lengths, end) => {
        const batch = parseOutput(output, end);
        const { parsed, deltas } = stream(chunked(output, lengths), end);
        expect(parsed).toEqual(batch);
        expect(deltas.join('')).toBe(batch.text);
      }),
      { numRuns: 60 },
    );
  });

  it('reports closed on the very chunk that completes </ACTION>, after a long block in one-character chunks', () => {
    const body = 'Two ales for the guard, <b>paid</b> & noted.\n'.repeat(300);
    const output = `Noting it.\n<ACTION><note><text><![CDATA[${body}]]></text></note><note><text>a ] b ]] c</text></note></ACTION> after`;
    const closer = output.indexOf('</ACTION>') + '</ACTION>'.length - 1;
    const scanner = createActionScanner();
    for (let index = 0; index < output.length; index++) {
      const { closed } = scanner.push(output[index] as string);
      expect(closed).toBe(index >= closer);
    }
    const parsed = scanner.end();
    expect(parsed.calls.map((call) => call.name)).toEqual(['note', 'note']);
    expect(parsed).toEqual(parseOutput(output));
  });

  it('keeps scanners apart when they run side by side and when a finished one hands its stage on', () => {
    const first = `Looking.\n<ACTION><note><text>${'ale '.repeat(3000)}</text></note></ACTION>`;
    const second = `Done  now.\t<ACTION><note><text><![CDATA[${'stew, '.repeat(2000)}]]></text></note></ACTION> then`;
    const a = createActionScanner();
    const b = createActionScanner();
    for (let index = 0; index < Math.max(first.length, second.length); index++) {
      if (index < first.length) a.push(first[index] as string);
      if (index < second.length) b.push(second[index] as string);
    }
    const parsedA = a.end();
    expect(parsedA).toEqual(parseOutput(first));
    // A new scanner may take the finished one's stage; the finished one must not notice.
    const c = createActionScanner();
    for (const char of second) c.push(char);
    expect(a.push('more').visible).toBe('');
    expect(a.end()).toBe(parsedA);
    expect(b.end()).toEqual(parseOutput(second));
    expect(c.end()).toEqual(parseOutput(second));
  });

  it('answers quiet one-character chunks with shared, frozen progress objects', () => {
    const scanner = createActionScanner();
    const progress = [...'Hello there, friend'].map((char) => scanner.push(char));
    expect(progress.map((step) => step.visible).join('')).toBe('Hello there, friend');
    // The two l's of "Hello": the same answer, which no caller can change.
    expect(progress[3]).toBe(progress[2]);
    expect(Object.isFrozen(progress[3])).toBe(true);
    expect(progress[6]).toEqual({ visible: ' t', closed: false });
  });

  it('answers quiet chunks of a few characters inside the block with one shared, frozen progress object', () => {
    const scanner = createActionScanner();
    scanner.push('Noting.\n<ACTION><note><text>');
    const progress = ['two ', 'ales', ' for', ' the', ' bar', 'd'].map((chunk) => scanner.push(chunk));
    expect(progress[1]).toBe(progress[0]);
    expect(progress[4]).toBe(progress[0]);
    expect(Object.isFrozen(progress[0])).toBe(true);
    expect(progress[0]).toEqual({ visible: '', closed: false });
    expect(scanner.push('</text></note></ACTION>').closed).toBe(true);
  });

  it('shows prose in chunks of a few characters as they come, holding back one trailing space', () => {
    const scanner = createActionScanner();
    const chunks = ['Hello', ' the', 're, ', '', 'frie', 'nd  ', 'and ', '\tyou'];
    expect(chunks.map((chunk) => scanner.push(chunk).visible)).toEqual(['Hello', ' the', 're,', '', ' frie', 'nd', '  and', ' \tyou']);
    expect(scanner.finish().parsed.text).toBe('Hello there, friend  and \tyou');
  });

  it('shows each character of prose on the push that brings it, holding back only trailing whitespace', () => {
    const prose = fc
      .array(fc.constantFrom('word', ' ', '  ', '\n', '\n\n', '\t', 'é', '😀', '.', '>', '-', ']'), { maxLength: 300 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(prose, fc.constantFrom([1], [1, 3, 1, 2], [4], [2, 4, 5]), (output, lengths) => {
        const scanner = createActionScanner();
        const chunks = chunked(output, lengths);
        let shown = '';
        let received = '';
        for (const chunk of chunks) {
          shown += scanner.push(chunk).visible;
          received += chunk;
          expect(shown).toBe(received.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ''));
        }
      }),
      { numRuns: 200 },
    );
  });
});
