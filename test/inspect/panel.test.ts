import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus, type Bus, type Pattern } from '../../src/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import { createEventHistory } from '../../src/inspect/index.js';
import { connectPanel, type Panel, type PanelGap, type PanelOptions, type PanelStatus } from '../../src/inspect/page/panel.js';
import { inspect, TOKEN } from './helpers.js';

const open: Panel[] = [];
afterEach(() => {
  for (const panel of open.splice(0)) panel.close();
});

/** A panel whose callbacks record what they get; `until` waits for a condition on the record. */
function watch<P extends Pattern = '*'>(url: string, options: Omit<PanelOptions<P>, 'onEvent'> = {}) {
  const seen = { events: [] as { id: string; type: string; agent?: string; text?: string }[], gaps: [] as PanelGap[], statuses: [] as PanelStatus[] };
  const waiters: { test: () => boolean; resolve: () => void }[] = [];
  const check = (): void => {
    for (const waiter of [...waiters]) {
      if (waiter.test()) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const panel = connectPanel<P>(url, {
    retryMs: 10,
    maxRetryMs: 100,
    ...options,
    onEvent: (event) => {
      const data = event.data as { text?: string };
      seen.events.push({ id: event.id, type: event.type, ...(event.agent === undefined ? {} : { agent: event.agent }), ...(data.text === undefined ? {} : { text: data.text }) });
      check();
    },
    onGap: (gap) => {
      seen.gaps.push(gap);
      check();
    },
    onStatus: (status) => {
      seen.statuses.push(status);
      check();
    },
  });
  open.push(panel);
  const until = (test: () => boolean) => new Promise<void>((resolve) => {
    waiters.push({ test, resolve });
    check();
  });
  return { panel, seen, until, ids: () => seen.events.map((event) => event.id) };
}

const say = (bus: Bus, text: string, agent = 'a') => bus.publish('agent.said', { text }, { agent, scene: 's' });
const tool = (bus: Bus, agent: string) => bus.publish('tool.started', { callId: `c-${agent}`, name: 'pour', args: {}, attempt: 1 }, { agent, scene: 's' });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => `e-${from + index}`);

function recorded() {
  const bus = createBus({ ids: sequentialIds('e') });
  return { bus, history: createEventHistory(bus) };
}

describe('connectPanel in Node', () => {
  it('streams the history, then live events, in order; reports its status; closes', async () => {
    const { bus, history } = recorded();
    say(bus, 'one');
    const inspector = await inspect({ bus, history });
    const { panel, seen, until, ids } = watch(inspector.url);
    await until(() => seen.events.length === 1);
    say(bus, 'two');
    await until(() => seen.events.length === 2);
    expect(seen.events).toEqual([
      { id: 'e-1', type: 'agent.said', agent: 'a', text: 'one' },
      { id: 'e-2', type: 'agent.said', agent: 'a', text: 'two' },
    ]);
    expect(panel.lastEventId).toBe('e-2');
    panel.close();
    await until(() => seen.statuses.at(-1)?.state === 'closed');
    say(bus, 'three');
    expect(ids()).toEqual(['e-1', 'e-2']);
    expect(seen.statuses.map((status) => status.state)).toEqual(['connecting', 'open', 'closed']);
  });

  it('filters by type pattern, agent and scene; the events come typed', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history });
    const names: string[] = [];
    const { seen, until } = watch(inspector.url, { filter: { types: ['tool.*'], agent: 'innkeeper' } });
    const typed = connectPanel(inspector.url, { filter: { types: ['tool.started'] }, onEvent: (event) => void names.push(event.data.name) });
    open.push(typed);
    tool(bus, 'innkeeper'); // e-1: kept
    tool(bus, 'guest'); // e-2: another agent
    say(bus, 'hi', 'innkeeper'); // e-3: another type
    bus.publish('tool.completed', { callId: 'c', name: 'pour', args: {}, output: 1, durationMs: 1, attempt: 1 }, { agent: 'innkeeper', scene: 's' }); // e-4
    await until(() => seen.events.length === 2);
    expect(seen.events.map((event) => [event.id, event.type])).toEqual([
      ['e-1', 'tool.started'],
      ['e-4', 'tool.completed'],
    ]);
    await new Promise<void>((resolve) => {
      const poll = (): void => (names.length === 2 ? resolve() : void setImmediate(poll));
      poll();
    });
    expect(names).toEqual(['pour', 'pour']);
  });

  it('reconnects to a server restarted with the same history: no duplicates, no gaps', async () => {
    const { bus, history } = recorded();
    const first = await inspect({ bus, history });
    const { port, url } = first;
    const { seen, until, ids } = watch(url);
    for (let n = 1; n <= 3; n++) say(bus, String(n));
    await until(() => seen.events.length === 3);
    await first.close();
    await until(() => seen.statuses.some((status) => status.state === 'reconnecting'));
    for (let n = 4; n <= 6; n++) say(bus, String(n)); // while no server runs
    await inspect({ bus, history, port });
    say(bus, '7');
    await until(() => seen.events.length >= 7);
    expect(ids()).toEqual(range(1, 7));
    expect(seen.gaps).toEqual([]);
    expect(seen.statuses.filter((status) => status.state === 'open')).toHaveLength(2);
  });

  it('reports a gap when the new server no longer holds where it was, then carries on', async () => {
    const { bus } = recorded();
    const history = createEventHistory(bus, { size: 2 });
    const first = await inspect({ bus, history });
    const { seen, until, ids } = watch(first.url);
    say(bus, '1');
    await until(() => seen.events.length === 1);
    await first.close();
    for (let n = 2; n <= 6; n++) say(bus, String(n)); // e-2 … e-4 fall out of the history
    await inspect({ bus, history, port: first.port });
    await until(() => seen.events.length === 3);
    expect(seen.gaps).toEqual([{ missed: 3, reason: 'history', kept: 2 }]);
    expect(ids()).toEqual(['e-1', 'e-5', 'e-6']);
  });

  it('asks for a policy: drop-oldest reports what it dropped', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history, queue: 3 });
    const { seen, until, ids } = watch(inspector.url, { policy: 'drop-oldest' });
    await until(() => seen.statuses.some((status) => status.state === 'open'));
    for (let n = 1; n <= 10; n++) say(bus, String(n));
    await until(() => seen.events.length === 3);
    expect(seen.gaps).toEqual([{ missed: 7, reason: 'drop-oldest' }]);
    expect(ids()).toEqual(range(8, 10));
  });

  it('gives up on a refusal (a wrong token) instead of retrying', async () => {
    const inspector = await inspect({ bus: createBus() });
    const { seen, until } = watch(`http://127.0.0.1:${inspector.port}/`, { token: `${TOKEN}-wrong` });
    await until(() => seen.statuses.some((status) => status.state === 'closed'));
    expect(seen.statuses).toEqual([{ state: 'connecting' }, { state: 'failed', status: 403, error: 'wrong token' }, { state: 'closed' }]);
  });

  it('keeps going when a callback throws', async () => {
    const { bus, history } = recorded();
    const inspector = await inspect({ bus, history });
    const errors: unknown[] = [];
    const texts: string[] = [];
    const panel = connectPanel(inspector.url, {
      filter: { types: ['agent.said'] },
      onEvent: (event) => {
        texts.push(event.data.text);
        if (event.data.text === 'bad') throw new Error('render failed');
      },
      onError: (error) => void errors.push(error),
    });
    open.push(panel);
    say(bus, 'bad');
    say(bus, 'good');
    await new Promise<void>((resolve) => {
      const poll = (): void => (texts.length === 2 ? resolve() : void setImmediate(poll));
      poll();
    });
    expect(texts).toEqual(['bad', 'good']);
    expect(errors).toEqual([new Error('render failed')]);
  });

  it('refuses bad options at once', () => {
    expect(() => connectPanel('http://127.0.0.1:1/', {} as never)).toThrow('connectPanel(url, options) needs options.onEvent, a function');
    expect(() => connectPanel('http://127.0.0.1:1/', { onEvent: () => undefined, policy: 'latest' as never })).toThrow(/policy must be one of/);
  });
});

describe('troupe/panel as a package', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, { types: string; import: string }>; scripts: { build: string } };

  it('exports the page folder the build copies, module and types, which exist in the source', () => {
    const panel = pkg.exports['./panel']!;
    expect(panel).toEqual({ types: './dist/src/inspect/page/panel.d.ts', import: './dist/src/inspect/page/panel.js' });
    // tsc does not emit the page's plain modules: the build copies the folder as it is.
    expect(pkg.scripts.build).toContain("cpSync('src/inspect/page','dist/src/inspect/page'");
    for (const target of [panel.types, panel.import]) expect(existsSync(`${root}${target.replace('./dist/', '')}`)).toBe(true);
    // The types reach the bus catalogue by a relative path that holds in dist/ as in src/.
    const imported = /from '(\.\.\/\.\.\/bus\/events\.js)'/.exec(readFileSync(`${root}src/inspect/page/panel.d.ts`, 'utf8'))?.[1];
    expect(imported).toBe('../../bus/events.js');
    expect(existsSync(`${root}src/bus/events.ts`)).toBe(true);
  });
});
