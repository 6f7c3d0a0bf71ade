import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseOutput } from '../../src/protocol/parse-output.js';
import { splitElements } from '../../src/protocol/xml-elements.js';
import { modelOutput } from './fragments.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

const wrap = (inner: string): string => `<ACTION>${inner}</ACTION>`;

describe('calls and arguments (rule 8)', () => {
  it('turns each child into a call and each grandchild into an argument, in order', () => {
    const output = `Ok.\n<ACTION>\n  <read_file>\n    <path>src/a.ts</path>\n    <lines>1</lines><lines>2</lines>\n  </read_file>\n  <!-- then -->\n  <list_dir><dir/></list_dir>\n</ACTION>`;
    const parsed = parseOutput(output);
    expect(parsed.problem).toBeUndefined();
    expect(parsed.calls).toEqual([
      {
        format: 'xml',
        callId: 'call_1',
        name: 'read_file',
        offset: output.indexOf('<read_file>'),
        args: [
          { name: 'path', raw: 'src/a.ts', selfClosing: false, offset: output.indexOf('<path>'), innerOffset: output.indexOf('<path>') + 6 },
          { name: 'lines', raw: '1', selfClosing: false, offset: output.indexOf('<lines>'), innerOffset: output.indexOf('<lines>') + 7 },
          { name: 'lines', raw: '2', selfClosing: false, offset: output.lastIndexOf('<lines>'), innerOffset: output.lastIndexOf('<lines>') + 7 },
        ],
      },
      {
        format: 'xml',
        callId: 'call_2',
        name: 'list_dir',
        offset: output.indexOf('<list_dir>'),
        args: [{ name: 'dir', raw: '', selfClosing: true, offset: output.indexOf('<dir/>'), innerOffset: output.indexOf('<dir/>') + 4 }],
      },
    ]);
  });

  it('keeps argument values raw: markup, CDATA and entities are the validate stage’s job', () => {
    const parsed = parseOutput(wrap('<write><content><![CDATA[a < b]]> &amp; <b>x</b></content></write>'));
    expect(parsed.calls[0]).toMatchObject({ args: [{ name: 'content', raw: '<![CDATA[a < b]]> &amp; <b>x</b>' }] });
  });

  it('gives each argument the exact offset of its inner text, whitespace before `>` included', () => {
    const output = `Ok.\n<ACTION><edit ><path\t>a.ts</path\n><body  ><line>1</line></body><flag />\n</edit></ACTION>`;
    const parsed = parseOutput(output);
    expect(parsed.problem).toBeUndefined();
    const args = parsed.calls[0]?.format === 'xml' ? parsed.calls[0].args : [];
    expect(args.map((argument) => argument.innerOffset)).toEqual([output.indexOf('a.ts'), output.indexOf('<line>'), output.indexOf('/>')]);
    for (const argument of args) {
      expect(output.slice(argument.innerOffset, (argument.innerOffset ?? 0) + argument.raw.length)).toBe(argument.raw);
    }
    // Nested elements split with `innerOffset` get exact offsets too.
    const body = args[1] as (typeof args)[number];
    const nested = splitElements(body.raw, body.innerOffset as number);
    expect(nested.ok && nested.value.elements[0]).toMatchObject({ name: 'line', offset: output.indexOf('<line>'), innerOffset: output.indexOf('1</line>') });
  });

  it('places every argument’s raw text at its innerOffset, for any output', () => {
    fc.assert(
      fc.property(modelOutput, (output) => {
        for (const call of parseOutput(output, { finishReason: 'stop_sequence', stopSequence: '</ACTION>' }).calls) {
          if (call.format !== 'xml') continue;
          for (const argument of call.args) {
            const at = argument.innerOffset as number;
            expect(output.slice(at, at + argument.raw.length)).toBe(argument.raw);
            expect(at).toBeGreaterThan(argument.offset + argument.name.length);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('uses the callId option', () => {
    const parsed = parseOutput(wrap('<a/><b/>'), { callId: (index) => `turn7-${index}` });
    expect(parsed.calls.map((call) => call.callId)).toEqual(['turn7-0', 'turn7-1']);
  });

  it('accepts prototype-looking names here; the validate stage rejects them', () => {
    const parsed = parseOutput(wrap('<__proto__><polluted>yes</polluted></__proto__><constructor><prototype>1</prototype></constructor>'));
    expect(parsed.calls.map((call) => call.name)).toEqual(['__proto__', 'constructor']);
  });
});

describe('malformed blocks', () => {
  it.each([
    ['text between calls', wrap('<a/> and then <b/>'), 'malformed_call', 13],
    ['text inside a call', wrap('<a>hello<x>1</x></a>'), 'malformed_call', 11],
    ['CDATA directly in a call', wrap('<a><![CDATA[x]]></a>'), 'malformed_call', 11],
    ['an argument-less call with text', wrap('<a>run</a>'), 'malformed_call', 11],
    ['no calls', wrap('  \n '), 'empty_action', 12],
    ['only a comment', wrap('<!-- nothing -->'), 'empty_action', 24],
    ['DOCTYPE', `<ACTION><!DOCTYPE a [<!ENTITY x "y">]><a/></ACTION>`, 'doctype_forbidden', 8],
    ['ENTITY inside a call', wrap('<a><!ENTITY x "y"></a>'), 'doctype_forbidden', 11],
    ['a processing instruction', wrap('<?xml version="1.0"?><a/>'), 'malformed_xml', 8],
    ['a mismatched tag', wrap('<a><x>1</y></a>'), 'malformed_xml', 11],
    ['an unclosed call', wrap('<a><x>1</x>'), 'malformed_xml', 8],
    ['an unclosed argument', wrap('<a><x>1</a>'), 'malformed_xml', 11],
    ['a bad call name', wrap('<1a/>'), 'malformed_xml', 8],
    ['a bad argument name', wrap('<a><x y/></a>'), 'attributes_not_supported', 11],
    ['an attribute on a call', wrap('<a id="1"><x>1</x></a>'), 'attributes_not_supported', 8],
    ['an attribute on an argument', wrap('<a><x type="int">1</x></a>'), 'attributes_not_supported', 11],
    ['a stray ]]> between calls', wrap('<a/>]]><b/>'), 'malformed_xml', 12],
    ['a forbidden control character', wrap('<a><x>\u0007</x></a>'), 'invalid_character', 14],
    ['U+FFFE', wrap('<a><x>\uFFFE</x></a>'), 'invalid_character', 14],
    ['a lone high surrogate', wrap('<a><x>\uD800x</x></a>'), 'invalid_character', 14],
    ['a lone low surrogate', wrap('<a><x>\uDC00</x></a>'), 'invalid_character', 14],
    ['a NUL in the opener region', '<ACTION>\u0000<a/></ACTION>', 'invalid_character', 8],
  ])('%s → %s', (_label, output, category, offset) => {
    expect(parseOutput(output)).toMatchObject({ calls: [], hasBlock: true, problem: { category, offset } });
  });

  it('allows TAB, LF, CR and astral characters', () => {
    expect(parseOutput(wrap('<a><x>\t\r\n😀</x></a>')).problem).toBeUndefined();
  });

  it('reports the first problem in document order', () => {
    // An attribute in the first call comes before text after it and an unclosed call after that.
    expect(parseOutput(wrap('<a><x k="1"/></a> text <b>')).problem?.category).toBe('attributes_not_supported');
    // Stray text comes before a later bad argument.
    expect(parseOutput(wrap('<a/> text <b><x k="1"/></b>')).problem?.category).toBe('malformed_call');
    // A problem inside the first call beats a structural problem later in the block.
    expect(parseOutput(wrap('<a><x>1</y></a><b>')).problem).toMatchObject({ category: 'malformed_xml', offset: 11 });
    // Size and characters are checked on the whole block first.
    expect(parseOutput(wrap('hello \u0001')).problem?.category).toBe('invalid_character');
  });
});

describe('limits (rules 6 and 8)', () => {
  it('limits the block size, opener to closer inclusive', () => {
    const output = wrap('<a/>');
    expect(parseOutput(output, { limits: { maxActionChars: output.length } }).problem).toBeUndefined();
    expect(parseOutput(output, { limits: { maxActionChars: output.length - 1 } }).problem).toMatchObject({ category: 'limit_exceeded', offset: 0 });
    expect(parseOutput(`x ${wrap('<a>' + 'y'.repeat(300_000) + '</a>')}`).problem).toMatchObject({ category: 'limit_exceeded', offset: 2 });
  });

  it('limits the number of calls (default 16)', () => {
    expect(parseOutput(wrap('<a/>'.repeat(16))).calls).toHaveLength(16);
    expect(parseOutput(wrap('<a/>'.repeat(17))).problem).toMatchObject({ category: 'limit_exceeded', offset: 8 + 16 * 4 });
    expect(parseOutput(wrap('<a/><b/><c/>'), { limits: { maxCallsPerAction: 2 } }).problem?.category).toBe('limit_exceeded');
  });

  it('checks element depth against maxDepth (ACTION 0, call 1, argument 2)', () => {
    expect(parseOutput(wrap('<a><x>1</x></a>'), { limits: { maxDepth: 2 } }).problem).toBeUndefined();
    expect(parseOutput(wrap('<a><x>1</x></a>'), { limits: { maxDepth: 1 } }).problem).toMatchObject({ category: 'limit_exceeded', offset: 11 });
    expect(parseOutput(wrap('<a/>'), { limits: { maxDepth: 1 } }).problem).toBeUndefined();
    expect(parseOutput(wrap('<a/>'), { limits: { maxDepth: 0 } }).problem?.category).toBe('limit_exceeded');
  });

  it('ignores undefined limit overrides', () => {
    expect(parseOutput(wrap('<a/>'.repeat(3)), { limits: { maxCallsPerAction: undefined } }).calls).toHaveLength(3);
  });
});
