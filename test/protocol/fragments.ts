import fc from 'fast-check';

/** Pieces of realistic and hostile model output; random concatenations exercise every mode of the scanner. */
export const FRAGMENTS = [
  'Let me check. ',
  'word ',
  '\n',
  '\n\n',
  '   ',
  '\t',
  '`',
  '``',
  '```',
  '````',
  '~~~',
  '```xml\n',
  '```a`b',
  '\n```\n',
  '<',
  '>',
  '</',
  '<!--',
  '-->',
  '<think>',
  '</think>',
  '<THINKING >',
  '</thinking>',
  '<OBSERVATION>',
  '</observation>',
  '<ACTION>',
  '<action >',
  '<ACTION/>',
  '<ACTION id="1">',
  '<ACTION ',
  '<ACTIONS>',
  '</ACTION>',
  '</ACTION >',
  '<![CDATA[',
  ']]>',
  '<read_file><path>a.ts</path></read_file>',
  '<w><c><![CDATA[if (a < b) { }]]></c></w>',
  '<x a="1"/>',
  '<!DOCTYPE x>',
  '<?pi?>',
  '&amp;',
  '&',
  '\u0001',
  '\uD800',
  '😀',
  'é',
  '\r\n',
];

/** A random model output built from `FRAGMENTS` and arbitrary text. */
export const modelOutput = fc
  .array(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...FRAGMENTS) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }), {
    maxLength: 40,
  })
  .map((parts) => parts.join(''));

/** Cuts `text` at the given fractions into chunks (empty chunks included on purpose). */
export function cut(text: string, cuts: number[]): string[] {
  const points = cuts.map((fraction) => Math.floor(fraction * (text.length + 1))).sort((a, b) => a - b);
  const chunks: string[] = [];
  let previous = 0;
  for (const point of points) {
    chunks.push(text.slice(previous, point));
    previous = point;
  }
  chunks.push(text.slice(previous));
  return chunks;
}
