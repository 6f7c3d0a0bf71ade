import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { completion, textStream } from '../llm/transcripts/openai.js';
import type { Envelope } from '../../src/bus/index.js';
import { streamKeyOf } from '../../src/redis/index.js';
import { scene as counters } from './fixtures/counters-scene.js';
import { failWithoutRedisUnderCi, findRedis } from './redis-server.js';
import { CHATTER, COUNTERS, runInProcess, streamEvents, troupe } from './worker-processes.js';

const TALK = fileURLToPath(new URL('../cli/fixtures/scenes/talk/index.ts', import.meta.url));

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

/** Runs the counters scene on a coordinator and two workers it starts; its summary line and the events stream. */
async function onTwoWorkers(name: string, options: readonly string[]) {
  const coordinator = troupe(['run', COUNTERS, '--redis', redis!.url, '--workers', '2', '--redis-name', name, '--partitions', '4', '--seed', '7', '--quiet', ...options]);
  expect(await coordinator.exited, coordinator.stderr()).toBe(0);
  return { summary: coordinator.stdout().trim(), events: await streamEvents(redis!.admin, streamKeyOf(name)) };
}

/**
 * An OpenAI-compatible chat completions endpoint that answers every request after `delayMs` with
 * a note, as a stream or whole as asked, and counts the requests in flight at once.
 */
async function slowModel(delayMs: number, answer = 'Noted.\n<ACTION><note><text>hello</text></note></ACTION>'): Promise<{ url: string; requests: number; peak: number; close(): Promise<void> }> {
  let running = 0;
  const seen = { requests: 0, peak: 0 };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => void (raw += String(chunk)));
    req.on('end', () => {
      seen.requests++;
      seen.peak = Math.max(seen.peak, ++running);
      setTimeout(() => {
        running--;
        if ((JSON.parse(raw) as { stream?: boolean }).stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const event of textStream([answer])) res.write(`data: ${typeof event === 'string' ? event : event.data}\n\n`);
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(completion({ content: answer }, 'stop')));
        }
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get requests() {
      return seen.requests;
    },
    get peak() {
      return seen.peak;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const peakOf = (summary: string): number => Number(/at most (\d+) calls at once/.exec(summary)?.[1]);

describe.runIf(redis !== undefined)("a scene's limits, budget and model on workers", () => {
  it('spends the scene budget once across workers: as many calls as in one process, one announcement, and the run ends with budget', async () => {
    const { summary, events } = await onTwoWorkers(redis!.scene('budget'), ['--npcs', '12', '--ticks', '5', '--budget-calls', '30']);
    const alone = await runInProcess(counters, 7, { npcs: 12, 'budget-calls': 30 }, 5);
    expect(alone.result.reason).toBe('budget');
    expect(alone.events.filter((event) => event.type === 'tool.completed')).toHaveLength(30);

    expect(events.filter((event) => event.type === 'tool.completed')).toHaveLength(30);
    // Each worker would have allowed 30 of its own without the shared budget: 60 calls were asked for.
    expect(events.filter((event) => event.type === 'action.parsed').length).toBeGreaterThan(30);
    const announced = events.filter((event) => event.type === 'budget.exhausted') as Envelope<'budget.exhausted'>[];
    expect(announced).toHaveLength(1);
    expect(announced[0]!.data).toMatchObject({ budget: 'counters', kind: 'toolCalls', limit: 30 });
    expect(summary).toMatch(/after 3 ticks, .* \(budget\)$/);
    expect(events.find((event) => event.type === 'scene.stopped')?.data).toMatchObject({ reason: 'budget' });
  }, 90_000);

  it('holds a tool limit across workers: never more calls at once than the scene allows, where without it there are more', async () => {
    const run = ['--npcs', '8', '--ticks', '2', '--delay-ms', '60', '--peak'];
    const limited = await onTwoWorkers(redis!.scene('limited'), [...run, '--bump-limit', '2']);
    const free = await onTwoWorkers(redis!.scene('free'), run);
    expect(peakOf(limited.summary)).toBe(2);
    expect(peakOf(free.summary)).toBeGreaterThan(2);
    expect(limited.events.filter((event) => event.type === 'tool.completed')).toHaveLength(16);
  }, 90_000);

  it('holds a turn limit across workers', async () => {
    const limited = await onTwoWorkers(redis!.scene('turns'), ['--npcs', '8', '--ticks', '2', '--delay-ms', '60', '--peak', '--turn-limit', '3']);
    expect(peakOf(limited.summary)).toBeLessThanOrEqual(3);
    expect(peakOf(limited.summary)).toBeGreaterThan(0);
    expect(limited.events.filter((event) => event.type === 'tool.completed')).toHaveLength(16);
  }, 90_000);

  it("holds a provider's model limit across workers: never more requests in flight than the scene allows", async () => {
    const run = async (name: string, extra: readonly string[]) => {
      const model = await slowModel(150);
      try {
        const env = { OPENAI_API_KEY: 'sk-test-0123456789abcdef', OPENAI_BASE_URL: model.url };
        const coordinator = troupe(['run', CHATTER, '--redis', redis!.url, '--workers', '2', '--redis-name', redis!.scene(name), '--partitions', '4', '--seed', '3', '--quiet', '--npcs', '8', '--ticks', '2', ...extra], env);
        expect(await coordinator.exited, coordinator.stderr()).toBe(0);
        const events = await streamEvents(redis!.admin, streamKeyOf(redis!.scene(name)));
        return { requests: model.requests, peak: model.peak, notes: events.filter((event) => event.type === 'tool.completed').length };
      } finally {
        await model.close();
      }
    };
    const limited = await run('model-limited', ['--model-limit', '2']);
    const free = await run('model-free', []);
    expect(limited.notes).toBe(16);
    expect(limited.requests).toBeGreaterThanOrEqual(16);
    expect(limited.peak).toBe(2);
    // The default (8 a provider) is shared too: more than 2 at once, never more than 8.
    expect(free.peak).toBeGreaterThan(2);
    expect(free.peak).toBeLessThanOrEqual(8);
  }, 90_000);

  it('runs --model on workers: each process makes the provider from the run, with its own keys', async () => {
    const model = await slowModel(10, 'Coming right up.\n<ACTION><pour><for>guest-1</for></pour></ACTION>');
    try {
      const name = redis!.scene('talk');
      const env = { OPENAI_API_KEY: 'sk-test-0123456789abcdef', OPENAI_BASE_URL: model.url };
      const coordinator = troupe(['run', TALK, '--redis', redis!.url, '--workers', '2', '--redis-name', name, '--seed', '3', '--ticks', '3', '--guests', '2', '--quiet', '--model', 'openai:gpt-4o-mini'], env);
      expect(await coordinator.exited, coordinator.stderr()).toBe(0);
      expect(coordinator.stderr()).not.toContain('sk-test-0123456789abcdef');
      const events = await streamEvents(redis!.admin, streamKeyOf(name));
      const asked = events.filter((event) => event.type === 'llm.request' && event.agent === 'innkeeper') as Envelope<'llm.request'>[];
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.every((event) => event.data.provider === 'openai' && event.data.model === 'gpt-4o-mini')).toBe(true);
      expect(model.requests).toBe(asked.length);
      expect(events.filter((event) => event.type === 'tool.completed' && event.agent === 'innkeeper').length).toBeGreaterThan(0);
    } finally {
      await model.close();
    }
  }, 90_000);

  it('says which key a worker lacks for the run\'s --model, in one line, and the run does not start there', async () => {
    const model = await slowModel(10);
    try {
      const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
      const worker = troupe(['worker', '--redis', redis!.url, '--scene', redis!.scene('keyless'), '--once'], env);
      const coordinator = troupe(['run', TALK, '--redis', redis!.url, '--workers', '1', '--wait-workers', '--redis-name', redis!.scene('keyless'), '--ticks', '2', '--quiet', '--model', 'openai:gpt-4o-mini'], { OPENAI_API_KEY: 'sk-test-0123456789abcdef', OPENAI_BASE_URL: model.url });
      expect(await worker.exited, worker.stderr()).toBe(1);
      expect(worker.stderr()).toMatch(/troupe worker: the run's --model openai:gpt-4o-mini: .*OPENAI_API_KEY/);
      coordinator.child.kill('SIGINT');
      await coordinator.exited;
      expect(model.requests).toBe(0);
    } finally {
      await model.close();
    }
  }, 90_000);
});
