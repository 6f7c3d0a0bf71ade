import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseOutput } from '../../src/protocol/parse-output.js';
import { renderAction, renderCall, type RenderOptions } from '../../src/protocol/render-call.js';
import { decodeText, splitElements } from '../../src/protocol/xml-elements.js';
import { isForbiddenName } from '../../src/protocol/forbidden-names.js';
import type { RawArgument } from '../../src/protocol/types.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

/** A shape-directed reader: the inverse of renderCall for a value of the same shape (rule 13/14 in miniature). */
function readValue(elements: RawArgument[], shape: unknown, verbatim: boolean): unknown {
  if (Array.isArray(shape)) {
    if (elements.length >= 2) return elements.map((element, index) => readValue([element], shape[index], false));
    const [element] = elements as [RawArgument];
    if (element.selfClosing || element.raw.trim() === '') return [];
    const split = splitElements(element.raw, 0);
    if (split.ok && !split.value.strayText && split.value.elements.length > 0) {
      return split.value.elements.map((child, index) => readValue([child], shape[index], false));
    }
    return [readValue([element], shape[0], verbatim)];
  }
  const [element] = elements as [RawArgument];
  if (shape !== null && typeof shape === 'object') {
    if (element.selfClosing || element.raw.trim() === '') return {};
    const split = splitElements(element.raw, 0);
    if (!split.ok || split.value.strayText) throw new Error(`not an object: ${element.raw}`);
    return readObject(split.value.elements, shape as Record<string, unknown>, new Set());
  }
  const text = decodeText(element.raw, { verbatim });
  if (!text.ok) throw new Error(text.problem.message);
  if (typeof shape === 'string') return text.value;
  if (shape === null) return text.value === 'null' ? null : text.value;
  if (typeof shape === 'boolean') return text.value === 'true';
  return Number(text.value);
}

function readObject(elements: RawArgument[], shape: Record<string, unknown>, verbatim: Set<string>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(shape)) {
    if (value === undefined) continue;
    result[key] = readValue(elements.filter((element) => element.name === key), value, verbatim.has(key));
  }
  return result;
}

const legalChar = fc.oneof(
  fc.constantFrom('<', '>', '&', ']', ']]>', '<![CDATA[', '&amp;', '&#10;', ' ', '\n', '\r', '\t', '\r\n', '-->', 'x', 'é', '😀'),
  fc.string({ unit: 'grapheme', maxLength: 3 }),
);
const text = fc.array(legalChar, { maxLength: 12 }).map((parts) => parts.join(''));
const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,7}$/).filter((key) => !isForbiddenName(key));
const scalar = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(name, tie('value'), { maxKeys: 3 }),
  ),
})).value;

describe('renderCall', () => {
  it('renders a readable call', () => {
    expect(renderCall({ name: 'read_file', args: { path: 'a.ts', lines: [1, 2], opts: { deep: true }, none: null } })).toBe(
      '<read_file>\n<path>a.ts</path>\n<lines>1</lines>\n<lines>2</lines>\n<opts>\n<deep>true</deep>\n</opts>\n<none>null</none>\n</read_file>',
    );
    expect(renderAction([{ name: 'patch', args: { diff: 'if (a < b)\n  x();' }, verbatimParams: ['diff'] }])).toBe(
      '<ACTION>\n<patch>\n<diff>\n<![CDATA[if (a < b)\n  x();]]>\n</diff>\n</patch>\n</ACTION>',
    );
  });

  it('splits ]]> across CDATA sections and protects edge whitespace', () => {
    expect(renderCall({ name: 'w', args: { c: 'a]]>b' } }, { cdata: 'always' })).toContain('<c><![CDATA[a]]]]><![CDATA[>b]]></c>');
    expect(renderCall({ name: 'w', args: { c: ' a\n' } })).toContain('<c>&#32;a&#10;</c>');
  });

  it.each<[string, RenderOptions['cdata']]>([
    ['auto', 'auto'],
    ['always CDATA', 'always'],
    ['never CDATA', 'never'],
  ])('round-trips random arguments through parseOutput, splitElements and decodeText (%s)', (_label, cdata) => {
    fc.assert(
      fc.property(name, fc.dictionary(name, value, { maxKeys: 4 }), fc.array(name, { maxLength: 2 }), (tool, args, verbatimNames) => {
        const verbatimParams = verbatimNames.filter((key) => typeof args[key] === 'string');
        const output = `Calling.\n${renderAction([{ name: tool, args, verbatimParams }], { cdata })}`;
        const parsed = parseOutput(output);
        expect(parsed.problem).toBeUndefined();
        expect(parsed.text).toBe('Calling.');
        const [call] = parsed.calls;
        expect(call?.format === 'xml' && call.name).toBe(tool);
        const read = readObject(call?.format === 'xml' ? call.args : [], args, new Set(verbatimParams));
        // Numbers go through text: compare what JSON would carry (-0 becomes 0).
        expect(read).toEqual(JSON.parse(JSON.stringify(args)));
      }),
      { numRuns: 300 },
    );
  });
});
