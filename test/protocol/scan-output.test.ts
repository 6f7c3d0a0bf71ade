import { describe, expect, it } from 'vitest';
import { createActionScanner, parseOutput } from '../../src/protocol/parse-output.js';
import type { ParsedOutput } from '../../src/protocol/types.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

/** The parts of a result most cases care about. */
function summary(parsed: ParsedOutput): { text: string; calls: string[]; problem?: string; trailing?: string } {
  return {
    text: parsed.text,
    calls: parsed.calls.map((call) => call.name),
    ...(parsed.problem && { problem: parsed.problem.category }),
    ...(parsed.trailing !== undefined && { trailing: parsed.trailing }),
  };
}

const CALL = '<ACTION><go/></ACTION>';

describe('finding the block (rules 1–3)', () => {
  it.each([
    ['plain text', 'Just an answer.', { text: 'Just an answer.', calls: [] }],
    ['text then a block', `Let me look.\n${CALL}`, { text: 'Let me look.', calls: ['go'] }],
    ['opener in any case, whitespace before >', '<action\n ><go/></Action  >', { text: '', calls: ['go'] }],
    ['<ACTIONS> is another name', `<ACTIONS>x</ACTIONS>`, { text: '<ACTIONS>x</ACTIONS>', calls: [] }],
    ['<ACTION_PLAN> is another name', '<ACTION_PLAN><go/></ACTION_PLAN>', { text: '<ACTION_PLAN><go/></ACTION_PLAN>', calls: [] }],
    ['a stray </ACTION> in prose is ignored', `I closed </ACTION> it.\n${CALL}`, { text: 'I closed </ACTION> it.', calls: ['go'] }],
    ['"<ACTION to" is prose', 'Use <ACTION to call tools.', { text: 'Use <ACTION to call tools.', calls: [] }],
    ['the closer inside CDATA does not close', '<ACTION><w><c><![CDATA[</ACTION>]]></c></w></ACTION>', { text: '', calls: ['w'] }],
    ['text after the block is trailing', `${CALL}\nObservation: made up`, { text: '', calls: ['go'], trailing: 'Observation: made up' }],
    ['whitespace after the block is not trailing', `${CALL}\n\n`, { text: '', calls: ['go'] }],
  ])('%s', (_label, output, expected) => {
    expect(summary(parseOutput(output))).toEqual(expected);
  });
});

describe('hidden regions (rule 1)', () => {
  it.each([
    ['backtick fence', '```xml\n<ACTION><go/></ACTION>\n```'],
    ['tilde fence', '~~~\n<ACTION><go/></ACTION>\n~~~'],
    ['long fence closed by a longer one', '````\n```\n<ACTION><go/></ACTION>\n`````'],
    ['indented fence (3 spaces)', '   ```\n<ACTION><go/></ACTION>\n   ```'],
  ])('a complete block only inside a fence → action_in_code_fence: %s', (_label, output) => {
    expect(parseOutput(output)).toMatchObject({ calls: [], hasBlock: false, problem: { category: 'action_in_code_fence' } });
  });

  it.each([
    ['an unclosed fence hides to the end', 'Example:\n```\n<ACTION><go/>'],
    ['inline code', 'Write `<ACTION><go/></ACTION>` to call.'],
    ['inline code with a longer run', 'Write `` `<ACTION><go/></ACTION>` `` to call.'],
    ['a code span across one newline', 'Write `x\n<ACTION><go/></ACTION>` to call.'],
    ['a comment', '<!-- <ACTION><go/></ACTION> -->'],
    ['an unclosed comment', '<!-- <ACTION><go/></ACTION>'],
    ['think', '<think>maybe <ACTION><go/></ACTION></think>'],
    ['thinking, any case, unclosed', '<THINKING>maybe <ACTION><go/></ACTION>'],
    ['OBSERVATION is runtime-owned', '<OBSERVATION>\n<ACTION><go/></ACTION>\n</OBSERVATION>'],
    ['a ``` fence whose info has no backtick', '```js <ACTION><go/></ACTION>\n'],
  ])('no block: %s', (_label, output) => {
    const parsed = parseOutput(output);
    expect(parsed.hasBlock).toBe(false);
    expect(parsed.calls).toEqual([]);
    expect(parsed.problem?.category).not.toBe('unclosed_action');
  });

  it.each([
    ['after a closed fence', '```\ncode\n```\n<ACTION><go/></ACTION>'],
    ['after a closing fence with trailing spaces', '```\ncode\n```   \n<ACTION><go/></ACTION>'],
    ['indented code is not code', '    <ACTION><go/></ACTION>'],
    ['a 4-space indented ``` is not a fence', '    ```\n<ACTION><go/></ACTION>'],
    ['a ``` line with a backtick in the info is not a fence', '```a`b\n<ACTION><go/></ACTION>'],
    ['~~~ does not close a ``` fence, ``` does', '```\n~~~\n```\n<ACTION><go/></ACTION>'],
    ['a shorter run does not close a fence, then it closes', '````\n```\n````\n<ACTION><go/></ACTION>'],
    ['an unmatched backtick is literal', 'it`s done <ACTION><go/></ACTION>'],
    ['a run is closed only by the same length', 'a `` b ` <ACTION><go/></ACTION>'],
    ['a span cannot cross a blank line', 'a `x\n\n<ACTION><go/></ACTION>'],
    ['a span cannot cross a fence line', 'a `x\n```\ny`\n```\n<ACTION><go/></ACTION>'],
    ['after a closed comment', '<!-- note --><ACTION><go/></ACTION>'],
    ['after think', '<think>plan</think><ACTION><go/></ACTION>'],
    ['after think with whitespace in the closer', '<think >plan</think\n><ACTION><go/></ACTION>'],
    ['after OBSERVATION', '<observation>x</OBSERVATION>\n<ACTION><go/></ACTION>'],
    ['inline code before the block', 'Run `ls` now.\n<ACTION><go/></ACTION>'],
    ['many runs, the first unmatched', '``` a `` b ` c `` d\n<ACTION><go/></ACTION>'],
  ])('a block: %s', (_label, output) => {
    expect(summary(parseOutput(output)).calls).toEqual(['go']);
  });

  it('the span oracle: after a failed span, later spans still hide', () => {
    // `` never closes (no other run of 2 before the blank line), so ` … ` is a span hiding the block.
    expect(parseOutput('a `` b ` <ACTION><go/></ACTION> ` c').hasBlock).toBe(false);
    expect(parseOutput('a `` b ` <ACTION><go/></ACTION> ` c\n\n<ACTION><go/></ACTION>').calls).toHaveLength(1);
  });
});

describe('count and closure (rules 4–5)', () => {
  it.each([
    ['two blocks', `${CALL} and ${CALL}`, 'multiple_action_blocks', 27],
    ['a self-closing second block', `${CALL}<ACTION/>`, 'multiple_action_blocks', 22],
    ['nested ACTION', '<ACTION><a/><ACTION><b/></ACTION>', 'malformed_xml', 12],
    ['nested ACTION inside an argument', '<ACTION><a><x><ACTION></x></a></ACTION>', 'malformed_xml', 14],
    ['unclosed', 'Sure.\n<ACTION><go/>', 'unclosed_action', 6],
    ['self-closing', '<ACTION/>', 'empty_action', 0],
    ['self-closing with space', '<ACTION />', 'empty_action', 0],
    ['attributes on the wrapper', '<ACTION id="1"><go/></ACTION>', 'attributes_not_supported', 0],
    ['attributes on a self-closing wrapper', "<ACTION kind='x'/>", 'attributes_not_supported', 0],
  ])('%s → %s', (_label, output, category, offset) => {
    expect(parseOutput(output)).toMatchObject({ calls: [], hasBlock: true, problem: { category, offset } });
  });

  it('a block outside wins over one in a fence', () => {
    expect(summary(parseOutput(`\`\`\`\n${CALL}\n\`\`\`\n<ACTION><real/></ACTION>`))).toEqual({ text: `\`\`\`\n${CALL}\n\`\`\``, calls: ['real'] });
  });

  it('a second block hidden in a fence after the block is not a second block', () => {
    expect(summary(parseOutput(`${CALL}\n\`\`\`\n${CALL}\n\`\`\``)).calls).toEqual(['go']);
  });

  it.each([
    ['</ACTION>', true],
    [' </action> ', true],
    ['</ACTION >', false],
    ['</OBSERVATION>', false],
  ])('stop_sequence %j: the block runs to the end → %s', (stopSequence, runs) => {
    const parsed = parseOutput('Reading.\n<ACTION><read><path>a</path></read>\n', { finishReason: 'stop_sequence', stopSequence });
    expect(parsed.calls.map((call) => call.name)).toEqual(runs ? ['read'] : []);
    expect(parsed.problem?.category).toBe(runs ? undefined : 'unclosed_action');
    expect(parsed.text).toBe('Reading.');
  });

  it('output cut off by length never runs', () => {
    const parsed = parseOutput('<ACTION><go/>', { finishReason: 'length', stopSequence: '</ACTION>' });
    expect(parsed.problem?.category).toBe('unclosed_action');
    expect(parsed.problem?.message).toContain('length');
  });

  it('a closed block runs whatever the finish reason', () => {
    expect(parseOutput(CALL, { finishReason: 'length' }).calls).toHaveLength(1);
  });
});

describe('visible text', () => {
  it.each([
    ['trimmed', '  \n Hello \n\n', 'Hello'],
    ['think removed', '<think>secret</think>\nHello', 'Hello'],
    ['thinking removed mid-text', 'A <thinking>x</thinking>B', 'A B'],
    ['unclosed think hides the rest', 'Hi.<think>and then', 'Hi.'],
    ['think inside code is shown', 'Use `<think>` tags.', 'Use `<think>` tags.'],
    ['observation and comments are shown', '<!-- c --> <OBSERVATION>o</OBSERVATION>', '<!-- c --> <OBSERVATION>o</OBSERVATION>'],
    ['only the text before the block', 'Before.\n<ACTION><go/></ACTION>\nAfter.', 'Before.'],
    ['the text before an unclosed block', 'Before. <ACTION>', 'Before.'],
    ['a think section after the block is irrelevant', '<ACTION><go/></ACTION><think>x</think>', ''],
  ])('%s', (_label, output, text) => {
    expect(parseOutput(output).text).toBe(text);
  });

  it('streams deltas that add up to the text and holds back what may be a tag', () => {
    const scanner = createActionScanner();
    const steps = ['Hello <', 'thi', 'nk>no</think> wor', 'ld. <ACT', 'ION><go/></ACTION> tail'];
    const progress = steps.map((chunk) => scanner.push(chunk));
    expect(progress.map((step) => step.visible)).toEqual(['Hello', '', '  wor', 'ld.', '']);
    expect(progress.map((step) => step.closed)).toEqual([false, false, false, false, true]);
    const parsed = scanner.end();
    expect(parsed.text).toBe('Hello  world.');
    expect(parsed.trailing).toBe('tail');
  });

  it('streams prose after an unmatched backtick up to the first <', () => {
    const scanner = createActionScanner();
    expect(scanner.push('it`s fine, ').visible).toBe('it`s fine,');
    expect(scanner.push('really <b>').visible).toBe(' really');
    expect(scanner.end().text).toBe('it`s fine, really <b>');
  });

  it('ignores chunks after end and returns the same result', () => {
    const scanner = createActionScanner();
    scanner.push('Hi');
    const first = scanner.end();
    expect(scanner.push('more')).toEqual({ visible: '', closed: false });
    expect(scanner.end()).toBe(first);
  });
});
