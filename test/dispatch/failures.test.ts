import { describe, expect, it } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { entry, harness, makeTool } from './helpers.js';

// Sync throws and non-Error rejections become `execution` failures with a readable
// message; the other calls of the turn still finish; results keep the model's order.
describe('dispatchCalls: tools that throw', () => {
  it('reports a sync throw and non-Error rejections while the others finish, in model order', async () => {
    const h = harness();
    const calls = [
      entry(makeTool('sync_throw', () => {
        throw new Error('boom');
      })),
      entry(makeTool('reject_string', () => Promise.reject('oops'))),
      entry(makeTool('ok', async () => ({ fine: true }))),
      entry(makeTool('reject_undefined', () => Promise.reject(undefined))),
      entry(makeTool('reject_object', () => Promise.reject({}))),
      entry(makeTool('sync_throw_string', () => {
        throw 'plain';
      })),
    ];
    const results = await dispatchCalls(calls, h.options);

    expect(results.map((result) => result.name)).toEqual(calls.map(({ call }) => call.name));
    expect(results.map((result) => result.status)).toEqual(['failed', 'failed', 'completed', 'failed', 'failed', 'failed']);
    const messages = results.map((result) => (result.status === 'failed' ? result.error.message : result.output));
    expect(messages).toEqual([
      'boom',
      'tool threw a non-Error value: "oops"',
      { fine: true },
      'tool threw a non-Error value: undefined',
      'tool threw a non-Error value: {}',
      'tool threw a non-Error value: "plain"',
    ]);
    for (const result of results) {
      if (result.status === 'failed') expect(result.error).toMatchObject({ kind: 'execution', retryable: false });
    }
    // every call got its start and its end on the bus
    expect(h.of('tool.started')).toHaveLength(6);
    expect(h.of('tool.failed').map((event) => event.data.error.kind)).toEqual(Array(5).fill('execution'));
    expect(h.of('tool.completed')).toHaveLength(1);
  });

  it('keeps the kind, retryable and hint a ToolError carries', async () => {
    const h = harness();
    const tool = makeTool('lookup', () => {
      throw new ToolError('no player 7', { kind: 'not_found', hint: 'list_players shows the ids' });
    });
    const [result] = await dispatchCalls([entry(tool)], h.options);
    expect(result).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { kind: 'not_found', message: 'no player 7', retryable: false, hint: 'list_players shows the ids' },
    });
    expect(h.of('tool.failed')[0]?.data.error.hint).toBe('list_players shows the ids');
  });

  it('passes odd outputs (a function, undefined) through untouched', async () => {
    const h = harness();
    const fn = () => 1;
    const results = await dispatchCalls([entry(makeTool('fn', () => fn)), entry(makeTool('nothing', () => undefined))], h.options);
    expect(results[0]).toMatchObject({ status: 'completed', output: fn });
    expect(results[1]).toMatchObject({ status: 'completed', output: undefined });
  });

  it('returns an empty list for an empty turn', async () => {
    await expect(dispatchCalls([], harness().options)).resolves.toEqual([]);
  });
});
