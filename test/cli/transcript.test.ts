import { describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/bus/events.js';
import { createStyler, plain, wantsColour } from '../../src/cli/style.js';
import { createTranscript, formatEvent } from '../../src/cli/transcript.js';
import { toolResult } from '../../src/tools/result-parts.js';
import { capture } from './helpers.js';

let next = 0;
/** A sample envelope of one type. */
function event<T extends Envelope['type']>(type: T, data: Envelope<T>['data'], agent?: string): Envelope {
  return { id: `e-${++next}`, type, at: 0, scene: 'tavern', agent, data } as Envelope;
}

const args = { item: 'rope', count: 1 };

describe('formatEvent', () => {
  it.each<[string, Envelope, string[]]>([
    ['speech', event('agent.said', { text: 'Ale?' }, 'innkeeper'), ['innkeeper: "Ale?"']],
    ['addressed speech', event('agent.said', { text: 'Ale?', to: 'guard' }, 'innkeeper'), ['innkeeper → guard: "Ale?"']],
    ['speech over lines', event('agent.said', { text: 'One.\nTwo.' }, 'bard'), ['bard: "One.\n    Two."']],
    [
      'a tool call',
      event('tool.completed', { callId: 'c1', name: 'give_item', args, output: { left: 2 }, durationMs: 1, attempt: 1 }, 'quartermaster'),
      ['  ⚙ quartermaster give_item(item: "rope", count: 1) → {"left":2}'],
    ],
    [
      'a rich result (an image as a placeholder, never its bytes)',
      event('tool.completed', { callId: 'c1', name: 'snap', args: {}, output: toolResult([{ type: 'text', text: 'the map' }, { type: 'image', data: new Uint8Array(2048), mediaType: 'image/png' }]), durationMs: 1, attempt: 1 }, 'scout'),
      ['  ⚙ scout snap() → "the map" + [image: image/png, 2.0 KB]'],
    ],
    ['the say tool (its speech has a line)', event('tool.completed', { callId: 'c1', name: 'say', args: { text: 'hi' }, output: 'said', durationMs: 1, attempt: 1 }, 'bard'), []],
    [
      'a failed call',
      event('tool.failed', { callId: 'c1', name: 'give_item', args, error: { kind: 'execution', message: 'only 0 rope left', retryable: false }, attempt: 2, durationMs: 1 }, 'quartermaster'),
      ['  ✗ quartermaster give_item(item: "rope", count: 1) failed (execution, attempt 2): only 0 rope left'],
    ],
    [
      'a correction (rejected call)',
      event('tool.rejected', { callId: 'c1', name: 'chek_stock', code: 'unknown_tool', category: 'unknown_tool', issues: [], message: 'Unknown tool "chek_stock".', suggestion: 'check_stock' }, 'quartermaster'),
      ['  ⚠ correction quartermaster chek_stock: Unknown tool "chek_stock". (did you mean check_stock?)'],
    ],
    [
      'a repaired call',
      event('tool.repaired', { callId: 'c1', name: 'chek_stock', before: { name: 'chek_stock', args: { item: 'rope' } }, after: { name: 'check_stock', args: { item: 'rope' } }, by: 'function', issues: [] }, 'quartermaster'),
      ['  ⚒ repaired quartermaster chek_stock(item: "rope") → check_stock(item: "rope") (by function)'],
    ],
    [
      'a result waiting for approval',
      event('tool.result.approval.requested', { callId: 'c1', name: 'read_file', args: {}, output: 'pw=1', outputHash: 'h' }, 'clerk'),
      ['  ? clerk read_file result waits for approval: "pw=1"'],
    ],
    [
      'a rejected result',
      event('tool.result.approval.resolved', { callId: 'c1', name: 'read_file', approved: false, reason: 'secret' }, 'clerk'),
      ['  ✗ result rejected read_file: secret'],
    ],
    [
      'a correction (malformed block)',
      event('action.malformed', { code: 'unclosed_action', category: 'unclosed_action', message: '<ACTION> was never closed' }, 'bard'),
      ['  ⚠ correction bard malformed <ACTION> (unclosed_action): <ACTION> was never closed'],
    ],
    [
      'a budget',
      event('budget.exhausted', { budget: 'bard', kind: 'tokens', limit: 100, used: 120, message: 'budget "bard" exhausted: tokens 120/100' }, 'bard'),
      ['  ⛔ budget "bard" exhausted: tokens 120/100'],
    ],
    ['a world change', event('world.changed', { path: 'tavern.ale', value: 9, tick: 3 }, 'innkeeper'), ['  ◆ world tavern.ale = 9']],
    ['a removal', event('world.changed', { path: 'tavern.rat', value: undefined, tick: 3 }), ['  ◆ world tavern.rat = (removed)']],
    ['a scene event', event('scene.event', { name: 'bell', payload: { rings: 3 } }), ['  ✦ event bell {"rings":3}']],
    ['a turn that failed', event('agent.finished', { reason: 'error', text: '', rounds: 1, stats: {} as never, error: 'provider down' }, 'bard'), ['  ✗ bard stopped with an error: provider down']],
    ['a turn that ended well (no line)', event('agent.finished', { reason: 'final_answer', text: 'ok', rounds: 1, stats: {} as never }, 'bard'), []],
    ['a model error', event('llm.error', { round: 1, kind: 'rate_limit', message: '429', retryable: true, attempt: 1 }, 'bard'), ['  ! bard model error (rate_limit, attempt 1): 429']],
    ['the start', event('scene.started', { tick: 0, seed: 42, agents: ['innkeeper', 'guard'] }), ['▶ scene tavern started · seed 42 · 2 agents: innkeeper, guard']],
    ['a tick', event('scene.tick', { tick: 3 }), ['── tick 3 ──']],
    ['the end', event('scene.stopped', { tick: 9, reason: 'budget', detail: 'tokens' }), ['■ scene tavern stopped at tick 9: budget (tokens)']],
    ['plumbing (no line)', event('agent.state', { from: 'deliberating', to: 'parsing' }, 'bard'), []],
  ])('%s', (_name, envelope, lines) => {
    expect(formatEvent(envelope)).toEqual(lines);
  });

  it('keeps long arguments and outputs brief', () => {
    const [line] = formatEvent(event('tool.completed', { callId: 'c1', name: 'note', args: { text: 'x'.repeat(500) }, output: 'y'.repeat(500), durationMs: 1, attempt: 1 }, 'bard'));
    expect(line!.length).toBeLessThan(260);
    expect(line).toMatch(/…\) → "y+…$/);
  });
});

describe('createTranscript', () => {
  const said = event('agent.said', { text: 'hi' }, 'a');

  it('with few agents, shows every tick', () => {
    const transcript = createTranscript();
    transcript.lines(event('scene.started', { tick: 0, seed: 1, agents: ['a', 'b'] }));
    expect(transcript.lines(event('scene.tick', { tick: 1 }))).toEqual(['── tick 1 ──']);
  });

  it('with many agents, shows a tick’s header only before its first line', () => {
    const transcript = createTranscript({ everyTickUpTo: 1 });
    transcript.lines(event('scene.started', { tick: 0, seed: 1, agents: ['a', 'b'] }));
    expect(transcript.lines(event('scene.tick', { tick: 1 }))).toEqual([]);
    expect(transcript.lines(event('scene.tick', { tick: 2 }))).toEqual([]);
    expect(transcript.lines(event('agent.state', { from: 'deliberating', to: 'parsing' }))).toEqual([]);
    expect(transcript.lines(said)).toEqual(['── tick 2 ──', 'a: "hi"']);
    expect(transcript.lines(said)).toEqual(['a: "hi"']);
  });
});

describe('colours', () => {
  it('are used only on a terminal without NO_COLOR', () => {
    const tty = capture({ tty: true }).stream;
    expect(wantsColour(tty, {})).toBe(true);
    expect(wantsColour(tty, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColour(tty, { NO_COLOR: '' })).toBe(true);
    expect(wantsColour(capture().stream, {})).toBe(false);
  });

  it('fall back to plain text where util.styleText is missing (Node < 20.12)', () => {
    expect(createStyler(true, null)).toBe(plain);
    const styled = createStyler(true, (format, text) => `<${String(format)}>${text}`);
    expect(formatEvent(said(), styled)).toEqual(['<bold,cyan>a: <white>"hi"']);
  });
});

function said(): Envelope {
  return event('agent.said', { text: 'hi' }, 'a');
}
