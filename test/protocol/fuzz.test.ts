import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createActionScanner, parseOutput } from '../../src/protocol/parse-output.js';
import { parseNativeCalls } from '../../src/protocol/parse-native.js';
import { parseCheckedJson } from '../../src/protocol/json-checked.js';
import { decodeText, splitElements } from '../../src/protocol/xml-elements.js';
import type { ParsedOutput } from '../../src/protocol/types.js';
import { FRAGMENTS, cut, modelOutput } from './fragments.js';
import { PROTOCOL_CATEGORIES, guardPrototype } from './helpers.js';

guardPrototype();

/** What every parse result must satisfy, whatever the input. */
function checkInvariants(parsed: ParsedOutput): void {
  if (parsed.problem) {
    expect(PROTOCOL_CATEGORIES.has(parsed.problem.category)).toBe(true);
    expect(parsed.calls).toEqual([]);
  }
  if (parsed.calls.length > 0) expect(parsed.hasBlock).toBe(true);
  expect(parsed.text).toBe(parsed.text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ''));
  if (parsed.trailing !== undefined) expect(parsed.trailing).not.toBe('');
}

const REALISTIC = [
  'I will read the file.\n\n<ACTION>\n<read_file>\n<path>src/index.ts</path>\n</read_file>\n</ACTION>',
  '<think>The user wants a diff.</think>\nPatching.\n<ACTION><apply_patch><patch><![CDATA[--- a\n+++ b\n@@\n-if (a < b)\n+if (a <= b)\n]]></patch></apply_patch></ACTION>',
  'Here is how you would call it:\n```xml\n<ACTION><search><q>x</q></search></ACTION>\n```\nBut I will not.',
  'Two at once: <ACTION><a><x>1</x></a><b><y>&lt;2&gt;</y><y>3</y></b></ACTION>\nObservation: fake',
];

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), text: fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 3, unit: 'binary' })) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), length: fc.integer({ min: 1, max: 12 }) }),
);
const mutated = fc.tuple(fc.constantFrom(...REALISTIC), fc.array(mutation, { maxLength: 6 })).map(([base, mutations]) =>
  mutations.reduce((text, step) => {
    const at = Math.floor(step.at * (text.length + 1));
    return step.kind === 'insert' ? text.slice(0, at) + step.text : text.slice(0, at) + text.slice(at + step.length);
  }, base),
);

describe('fuzz: never throws, never pollutes, only protocol categories', () => {
  it.each([
    ['random binary strings', fc.string({ unit: 'binary', maxLength: 300 })],
    ['random fragments', modelOutput],
    ['mutated realistic outputs', mutated],
  ])('%s', (_label, outputs) => {
    fc.assert(
      fc.property(outputs, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), (output, cuts) => {
        const parsed = parseOutput(output, { finishReason: 'stop_sequence', stopSequence: '</ACTION>' });
        checkInvariants(parsed);
        checkInvariants(parseOutput(output, { limits: { maxActionChars: 40, maxCallsPerAction: 1, maxDepth: 1 } }));
        const scanner = createActionScanner({ finishReason: 'stop_sequence', stopSequence: '</ACTION>' });
        for (const chunk of cut(output, cuts)) scanner.push(chunk);
        expect(scanner.end()).toEqual(parsed);
        for (const call of parsed.calls) {
          if (call.format !== 'xml') continue;
          for (const argument of call.args) {
            const text = decodeText(argument.raw, { verbatim: false });
            if (!text.ok) expect(text.problem.category).toBe('malformed_xml');
            splitElements(argument.raw, argument.offset);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('splitElements, decodeText, parseCheckedJson and parseNativeCalls never throw on random text', () => {
    fc.assert(
      fc.property(modelOutput, fc.boolean(), (text, verbatim) => {
        const split = splitElements(text, 0);
        if (!split.ok) expect(PROTOCOL_CATEGORIES.has(split.problem.category)).toBe(true);
        decodeText(text, { verbatim });
        parseCheckedJson(text, { maxDepth: 4, baseDepth: 1 });
        checkInvariants(parseNativeCalls({ text, toolCalls: [{ id: text, name: text, arguments: text }] }));
      }),
      { numRuns: 300 },
    );
  });
});

/** Backtick runs of lengths 1, 2, 3, … separated by `separator`, about `size` characters. */
function growingRuns(size: number, separator: string): string {
  const parts: string[] = [];
  let total = 0;
  for (let length = 1; total < size; length++) {
    parts.push('`'.repeat(length));
    total += length + separator.length;
  }
  return parts.join(separator);
}

const N = 100_000;
const HOSTILE: [string, string][] = [
  ['100k <', '<'.repeat(N)],
  ['100k backticks', '`'.repeat(N)],
  ['backtick runs of growing length', growingRuns(N, ' x ')],
  ['backtick runs of shrinking length', growingRuns(N, 'a').split('a').reverse().join('a')],
  ['backtick runs on separate lines', growingRuns(N, '\n')],
  ['an unmatched backtick before 100k <', '`' + ' <'.repeat(N / 2)],
  ['alternating backticks and text', '`a'.repeat(N / 2)],
  ['100k fence-like lines', '```x\n'.repeat(N / 5)],
  ['a fence line whose info fails at the end', '```' + 'a'.repeat(N) + '`'],
  ['100k ACTION attempts', '<ACTION '.repeat(N / 8)],
  ['an endless ACTION attribute', '<ACTION a' + 'b'.repeat(N)],
  ['100k think openers', '<think'.repeat(N / 6)],
  ['100k comment openers', '<!--'.repeat(N / 4)],
  ['deeply nested same-name tags', `<ACTION><a><x>${'<x>'.repeat(N / 3)}${'</x>'.repeat(N / 4)}</x></a></ACTION>`],
  ['deeply nested calls', `<ACTION>${'<a>'.repeat(N / 3)}${'</a>'.repeat(N / 3)}</ACTION>`],
  ['100k < inside a block', `<ACTION>${'<'.repeat(N)}`],
  ['100k CDATA openers inside a block', `<ACTION>${'<![CDATA['.repeat(N / 9)}`],
  ['1 MB of prose with a block', `${'Lorem `ipsum` <b>dolor</b> sit amet, consectetur. '.repeat(20_000)}<ACTION><a><x>1</x></a></ACTION>`],
  ['a 1 MB block', `<ACTION><w><c><![CDATA[${'x < y && z\n'.repeat(100_000)}]]></c></w></ACTION>`],
  ['1 MB of random-looking text', Array.from({ length: 1_000_000 }, (_, index) => '<`>! \n-ACTION/'[(index * 7919) % 15]).join('')],
];

describe('hostile inputs finish (the test timeout is the guard)', () => {
  it.each(HOSTILE)('%s', (_label, output) => {
    const parsed = parseOutput(output, { limits: { maxActionChars: 2_000_000 } });
    checkInvariants(parsed);
    const scanner = createActionScanner({ limits: { maxActionChars: 2_000_000 } });
    for (let index = 0; index < output.length; index += 997) scanner.push(output.slice(index, index + 997));
    expect(scanner.end()).toEqual(parsed);
  });

  it('streams 100k characters one at a time', () => {
    const output = growingRuns(N, ' <x ');
    const scanner = createActionScanner();
    for (const char of output) scanner.push(char);
    expect(scanner.end()).toEqual(parseOutput(output));
  });

  it.each([
    ['unclosed children', () => splitElements('<a>'.repeat(N), 0)],
    ['nested children', () => splitElements(`<a>${'<a>'.repeat(N)}${'</a>'.repeat(N)}`, 0)],
    ['partial close tags', () => splitElements('<a></a'.repeat(N), 0)],
    ['open tags without >', () => splitElements(`<a>${'<a '.repeat(N)}`, 0)],
    ['references', () => decodeText('&#'.repeat(N) + '&#99999999999999999999;'.repeat(1000), { verbatim: false })],
    ['comment openers in a value', () => decodeText('<!--'.repeat(N), { verbatim: false })],
    ['PI openers in a value', () => decodeText('<?'.repeat(N), { verbatim: false })],
    ['JSON brackets', () => parseCheckedJson('['.repeat(N), { maxDepth: 1e9, baseDepth: 0 })],
    ['JSON escapes', () => parseCheckedJson(`"${'\\n'.repeat(N)}"`, { maxDepth: 1, baseDepth: 0 })],
  ])('element layer: %s', (_label, run) => {
    expect(() => run()).not.toThrow();
  });
});
