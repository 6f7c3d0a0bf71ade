import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { NO_APPROVER } from '../../src/cli/approval-policy.js';
import { capture, jsonLines, troupe } from './helpers.js';

/**
 * How `troupe run` answers tool calls that need approval: the tavern's steward asks to open the
 * cellar when the stew runs low (seed 7, at tick 4).
 */

const PACKAGE = { scenesDir: undefined };

describe('troupe run --approve', () => {
  it('without --inspect denies at once, saying why, and the evening finishes on its own', async () => {
    const { code, out } = await troupe(['run', 'tavern', '--seed', '7'], PACKAGE);
    expect(code).toBe(0);
    expect(out).toContain('  ? steward open_cellar(item: "stew", count: 3) waits for approval\n');
    expect(out).toContain(`  ✗ denied open_cellar: ${NO_APPROVER}\n`);
    expect(out).toContain('steward: "No stew from the cellar tonight, then."');
    expect(out.trimEnd().split('\n').at(-1)).toMatch(/^The Wobbly Flagon closes at tick 30 \(ticks\): \d+ portions served; the cellar stayed shut; /);
  });

  it('--approve all approves at once: the stew comes up', async () => {
    const { code, out } = await troupe(['run', 'tavern', '--seed', '7', '--approve', 'all'], PACKAGE);
    expect(code).toBe(0);
    expect(out).toContain('  ✓ approved open_cellar\n');
    expect(out).toContain('  ⚙ steward open_cellar(item: "stew", count: 3) → {"brought":3,"item":"stew","atTheBar":4}');
    expect(out).toContain('; 3 portions brought up from the cellar; ');
  });

  it('gives the same events every time for a seed, whichever way it answers', async () => {
    for (const approve of ['none', 'all']) {
      const first = await troupe(['run', 'tavern', '--seed', '7', '--json', '--approve', approve], PACKAGE);
      const again = await troupe(['run', 'tavern', '--seed', '7', '--json', '--approve', approve], PACKAGE);
      const strip = (text: string) => jsonLines(text).map(({ at: _at, ...event }) => event);
      expect(strip(again.out)).toEqual(strip(first.out));
    }
  });

  it('refuses a policy it does not know', async () => {
    expect(await troupe(['run', 'tavern', '--approve', 'maybe'], PACKAGE)).toMatchObject({ code: 2, err: 'troupe run tavern: --approve must be ask, all or none; got "maybe"\n' });
  });

  it('with --inspect leaves the decision to the page: the tick waits until the steward is approved there', async () => {
    const out = capture();
    let seen!: (text: string) => void;
    const serving = new Promise<string>((resolve) => (seen = resolve));
    const err = capture({ onWrite: () => /inspector: http/.test(err.text()) && seen(err.text()) });
    const listeners = new Set<() => void>();
    const exit = main(['run', 'tavern', '--seed', '7', '--inspect', '--quiet'], out.stream, err.stream, {
      env: {},
      clock: () => 0,
      interrupts: (listener) => {
        listeners.add(listener);
        return () => void listeners.delete(listener);
      },
      exit: () => undefined,
    });
    const [, base, token] = /inspector: (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]{64})/.exec(await serving)!;
    const headers = { 'X-Troupe-Token': token!, Origin: base!, 'Content-Type': 'application/json' };
    // The steward's request, once the scene reaches it; the scene waits there.
    let request: { callId: string; argsHash: string };
    await expect
      .poll(async () => {
        const state = (await (await fetch(`${base}/state`, { headers })).json()) as { tick: number; agents: { name: string; state: string }[] };
        return state.agents.find((agent) => agent.name === 'steward')?.state;
      }, { timeout: 15_000 })
      .toBe('awaitingApproval');
    const events = await readUntil(base!, token!, 'tool.approval.requested');
    request = events.find((event) => event.type === 'tool.approval.requested')!.data as { callId: string; argsHash: string };
    // The scene waits for the page: no tick passes while the request is open.
    const before = (await (await fetch(`${base}/state`, { headers })).json()) as { tick: number; stopped: boolean };
    expect(before.stopped).toBe(false);
    expect(out.text()).toBe('');
    const answer = await fetch(`${base}/control`, { method: 'POST', headers, body: JSON.stringify({ type: 'approve', agent: 'steward', callId: request.callId, argsHash: request.argsHash }) });
    expect(answer.status).toBe(200);
    await expect.poll(() => err.text(), { timeout: 15_000 }).toContain('still serving');
    for (const listener of [...listeners]) listener();
    expect(await exit).toBe(0);
    expect(out.text()).toContain('; 3 portions brought up from the cellar; ');
  }, 30_000);
});

/** Reads `/events` until an event of type `last` arrives. */
async function readUntil(base: string, token: string, last: string): Promise<{ type: string; data: unknown }[]> {
  const controller = new AbortController();
  const response = await fetch(`${base}/events`, { headers: { 'X-Troupe-Token': token }, signal: controller.signal });
  const events: { type: string; data: unknown }[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) !== -1) {
      const data = /^data: (.*)$/m.exec(text.slice(0, end))?.[1];
      text = text.slice(end + 2);
      if (data !== undefined && data.startsWith('{"v"')) events.push(JSON.parse(data) as { type: string; data: unknown });
    }
    if (events.some((event) => event.type === last)) break;
  }
  controller.abort();
  return events;
}
