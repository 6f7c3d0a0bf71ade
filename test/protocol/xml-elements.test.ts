import { describe, expect, it } from 'vitest';
import { decodeText, splitElements } from '../../src/protocol/xml-elements.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

describe('splitElements', () => {
  it('splits children with their exact inner text and offsets', () => {
    const result = splitElements(' <path>a.ts</path>\n  <!-- note -->\n<line >3</line ><flag/>', 100);
    expect(result).toEqual({
      ok: true,
      value: {
        strayText: false,
        elements: [
          { name: 'path', raw: 'a.ts', selfClosing: false, offset: 101, innerOffset: 107 },
          { name: 'line', raw: '3', selfClosing: false, offset: 135, innerOffset: 142 },
          { name: 'flag', raw: '', selfClosing: true, offset: 151, innerOffset: 156 },
        ],
      },
    });
  });

  it.each([
    ['same-name tags nest', '<a>x<a>y</a>z</a>', 'x<a>y</a>z'],
    ['raw < in code is text', '<code>if (a < b && c<d) {}</code>', 'if (a < b && c<d) {}'],
    ['a close tag inside CDATA is skipped', '<code><![CDATA[</code>]]></code>', '<![CDATA[</code>]]>'],
    ['a close tag inside a comment is skipped', '<code><!-- </code> --></code>', '<!-- </code> -->'],
    ['a close tag inside a PI is skipped', '<code><?php </code> ?></code>', '<?php </code> ?>'],
    ['a nested self-closing tag does not nest', '<a><a/>x</a>', '<a/>x'],
    ['other names do not nest', '<a><b>x</b></a>', '<b>x</b>'],
    ['a longer name is another name', '<a><ab>x</a>', '<ab>x'],
    ['whitespace before > in the close tag', '<a>x</a\n >', 'x'],
    ['markup stays in the raw text', '<a>&lt;b&gt; <i>c</i></a>', '&lt;b&gt; <i>c</i>'],
    ['non-ASCII names', '<données>1</données>', '1'],
  ])('%s', (_label, input, raw) => {
    const result = splitElements(input, 0);
    expect(result.ok && result.value.elements[0]?.raw).toBe(raw);
  });

  it.each([
    ['text between children', '<a>1</a> hello <b>2</b>'],
    ['text before the children', 'x<a>1</a>'],
    ['CDATA between children', '<a>1</a><![CDATA[x]]>'],
    ['text only', 'just words'],
  ])('flags stray text: %s', (_label, input) => {
    const result = splitElements(input, 0);
    expect(result.ok && result.value.strayText).toBe(true);
  });

  it.each([
    ['<!DOCTYPE x [<!ENTITY e "boom">]><a/>', 'doctype_forbidden', 0],
    ['<a/><!ENTITY e "x">', 'doctype_forbidden', 4],
    ['<!doctype x>', 'doctype_forbidden', 0],
    ['<?xml version="1.0"?><a/>', 'malformed_xml', 0],
    ['<a>1</b>', 'malformed_xml', 0],
    ['<a>1', 'malformed_xml', 0],
    ['<a/></a>', 'malformed_xml', 4],
    ['<1a>x</1a>', 'malformed_xml', 0],
    ['< a>x</a>', 'malformed_xml', 0],
    ['<a x="1">y</a>', 'attributes_not_supported', 0],
    ['<a/><b  id=2/>', 'attributes_not_supported', 4],
    ['<a>x</a>]]>', 'malformed_xml', 8],
    ['<a>x</a><!-- unclosed', 'malformed_xml', 8],
    ['<a><![CDATA[</a>', 'malformed_xml', 0],
    ['<a"x">', 'malformed_xml', 0],
  ])('%j → %s at %i', (input, category, offset) => {
    expect(splitElements(input, 0)).toEqual({ ok: false, problem: expect.objectContaining({ category, offset }) });
  });

  it.each(['oops <a x="1"/>', '<![CDATA[ unclosed', 'x <!DOCTYPE y>'])(
    'reports stray text before a later structural problem (document order): %j',
    (input) => {
      expect(splitElements(input, 0)).toEqual({ ok: true, value: { elements: [], strayText: true } });
    },
  );

  it('never writes Object.prototype for prototype-named elements', () => {
    const result = splitElements('<__proto__><polluted>1</polluted></__proto__><constructor/>', 0);
    expect(result.ok && result.value.elements.map((element) => element.name)).toEqual(['__proto__', 'constructor']);
  });
});

describe('decodeText', () => {
  it.each([
    ['trims ASCII whitespace at both ends', '  \n hello world \t\r\n', 'hello world'],
    ['decodes the five entities in one pass', '&lt;a&gt; &amp;lt; &quot;&apos;', `<a> &lt; "'`],
    ['decodes numeric references', '&#65;&#x42;&#x1F600;&#10;', 'AB😀\n'],
    ['keeps unknown entities and bare &', '&nbsp; a & b &amp c &#xZZ; &#;', '&nbsp; a & b &amp c &#xZZ; &#;'],
    ['keeps references to illegal characters', '&#0;&#1;&#xFFFE;&#xD800;&#x110000;&#99999999999;', '&#0;&#1;&#xFFFE;&#xD800;&#x110000;&#99999999999;'],
    ['unwraps CDATA verbatim', '<![CDATA[ <b>&amp;</b> ]]>', ' <b>&amp;</b> '],
    ['trims outside CDATA only', '  <![CDATA[  x  ]]>  ', '  x  '],
    ['joins text and CDATA', 'a <![CDATA[<]]> b', 'a < b'],
    ['keeps comments and markup as text', 'x <!-- &amp; --> <b>y</b>', 'x <!-- &amp; --> <b>y</b>'],
    ['keeps leading whitespace written as references', '&#32;a &#9;', ' a \t'],
    ['whitespace-only is empty', ' \n\t ', ''],
    ['empty is empty', '', ''],
    ['split CDATA keeps ]]>', '<![CDATA[a]]]]><![CDATA[>b]]>', 'a]]>b'],
  ])('%s', (_label, raw, expected) => {
    expect(decodeText(raw, { verbatim: false })).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['one leading and one trailing LF', '\n  indented\n\n', '  indented\n'],
    ['CRLF counts as one newline', '\r\nx\r\n', 'x'],
    ['spaces are kept', '  x  ', '  x  '],
    ['whitespace-only is still empty', '\n \n', ''],
    ['entities are still decoded', '\na &amp; b\n', 'a & b'],
    ['CDATA inside is kept', '\n<![CDATA[\n<x>\n]]>\n', '\n<x>\n'],
  ])('verbatim: %s', (_label, raw, expected) => {
    expect(decodeText(raw, { verbatim: true })).toEqual({ ok: true, value: expected });
  });

  it.each(['a ]]> b', '<![CDATA[x', ']]>'])('%j → malformed_xml', (raw) => {
    expect(decodeText(raw, { verbatim: false })).toEqual({ ok: false, problem: expect.objectContaining({ category: 'malformed_xml' }) });
  });
});
