import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, scriptedProvider, ToolError, type ToolRetryPolicy } from '../../src/index.js';
import { backoff, dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { entry, harness, makeTool } from './helpers.js';

/** A tool that throws the next of `errors` at each attempt, then answers 'ok'. */
function failing(errors: (() => unknown)[], retry: ToolRetryPolicy, extra: Parameters<typeof makeTool>[2] = {}) {
  let attempts = 0;
  const tool = makeTool('flaky', () => {
    const next = errors[attempts++];
    if (next !== undefined) throw next();
    return 'ok';
  }, { retry, ...extra });
  return { tool, attempts: () => attempts };
}

const timedOut = () => new Error('Command timed out after 120000ms');
const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const limited = () => Object.assign(new Error('Too Many Requests'), { status: 429 });

/** Runs one call with a recording sleep; returns its result and the delays slept. */
async function run(tool: ReturnType<typeof makeTool>) {
  const sleeps: number[] = [];
  const h = harness({ sleep: async (ms) => void sleeps.push(ms) });
  const [result] = await dispatchCalls([entry(tool)], h.options);
  return { result: result!, sleeps, failures: h.of('tool.failed').map((event) => event.data.error.kind) };
}

describe('retries by kind of failure', () => {
  it('gives each kind its own attempts: timeouts once, network errors up to four times', async () => {
    const retry: ToolRetryPolicy = { attempts: 2, byKind: { timeout: { attempts: 1 }, network: { attempts: 4, backoffMs: 50 } } };
    const slow = await run(failing([timedOut], retry).tool);
    expect(slow.result).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'timeout', retryable: true } });
    expect(slow.sleeps).toEqual([]);

    const flaky = failing([reset, reset, reset], retry);
    const network = await run(flaky.tool);
    expect(network.result).toMatchObject({ status: 'completed', attempts: 4 });
    expect(network.sleeps).toEqual([50, 100, 200]);
  });

  it("falls back on the policy's own attempts and delays for kinds it does not name", async () => {
    const retry: ToolRetryPolicy = { attempts: 3, backoffMs: 20, byKind: { timeout: { attempts: 1 } } };
    const { result, sleeps } = await run(failing([limited, limited], retry).tool);
    expect(result).toMatchObject({ status: 'completed', attempts: 3 });
    expect(sleeps).toEqual([20, 40]);
  });

  it('waits longer after a rate limit, with its own delays', async () => {
    const retry: ToolRetryPolicy = { attempts: 3, byKind: { rate_limit: { attempts: 3, backoffMs: 8_000, maxBackoffMs: 30_000 } } };
    const { result, sleeps, failures } = await run(failing([limited, limited], retry).tool);
    expect(result).toMatchObject({ status: 'completed', attempts: 3 });
    expect(failures).toEqual(['rate_limit', 'rate_limit']);
    expect(sleeps).toEqual([8_000, 16_000]);
    // Without a cap of its own, a kind's first delay is never cut by the policy's (5 s here).
    const uncapped = await run(failing([limited, limited], { attempts: 3, byKind: { rate_limit: { backoffMs: 8_000 } } }).tool);
    expect(uncapped.sleeps).toEqual([8_000, 8_000]);
  });

  it('counts every attempt of the call: the latest failure decides how many it may have', async () => {
    // Two network failures, then a timeout at attempt 3: timeouts allow 2 attempts, so it ends there.
    const retry: ToolRetryPolicy = { attempts: 1, byKind: { network: { attempts: 5 }, timeout: { attempts: 2 } } };
    const flaky = failing([reset, reset, timedOut], retry);
    const { result } = await run(flaky.tool);
    expect(result).toMatchObject({ status: 'failed', attempts: 3, error: { kind: 'timeout' } });
    expect(flaky.attempts()).toBe(3);
  });

  it('retries an execution error only when the tool says it may, as a ToolError with retryable: true', async () => {
    const retry: ToolRetryPolicy = { attempts: 3 };
    const plain = await run(failing([() => new Error('disk full')], retry).tool);
    expect(plain.result).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'execution', retryable: false } });

    const said = await run(failing([() => new ToolError('stale read, try again', { retryable: true })], retry).tool);
    expect(said.result).toMatchObject({ status: 'completed', attempts: 2 });

    // A kind's entry sets attempts and delays; it never makes a failure retryable.
    const named = await run(failing([() => new Error('disk full')], { attempts: 1, byKind: { execution: { attempts: 3 } } }).tool);
    expect(named.result).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('never retries a writer that is not idempotent, whatever the policy or the error says', async () => {
    const retry: ToolRetryPolicy = { attempts: 3, byKind: { network: { attempts: 5 } } };
    for (const error of [reset, () => new ToolError('conflict', { retryable: true })]) {
      const writer = failing([error], retry, { readOnly: false });
      expect((await run(writer.tool)).result).toMatchObject({ status: 'failed', attempts: 1 });
    }
    const idempotent = failing([reset], retry, { readOnly: false, idempotent: true });
    expect((await run(idempotent.tool)).result).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('computes a kind\'s delays, and keeps the old ones for a policy without byKind', () => {
    const tool = { retry: { attempts: 5, backoffMs: 100, maxBackoffMs: 1_000, byKind: { network: { backoffMs: 300, maxBackoffMs: 500 } } } };
    expect([1, 2, 3].map((attempt) => backoff(tool, attempt, 'network'))).toEqual([300, 500, 500]);
    expect([1, 2, 5].map((attempt) => backoff(tool, attempt, 'timeout'))).toEqual([100, 200, 1_000]);
    expect([1, 2, 5].map((attempt) => backoff(tool, attempt))).toEqual([100, 200, 1_000]);
  });
});

describe('defineTool: retry.byKind', () => {
  const base = { name: 'fetch_page', description: 'Fetch a page.', parameters: { type: 'object', properties: {} }, readOnly: true, execute: () => 'ok' } as const;

  it('takes a policy per kind, and attempts default to 1', () => {
    const tool = defineTool({ ...base, retry: { byKind: { network: { attempts: 4, backoffMs: 250 }, timeout: { attempts: 1 } } } });
    expect(tool.retry).toEqual({ attempts: 1, backoffMs: 100, maxBackoffMs: 5_000, byKind: { network: { attempts: 4, backoffMs: 250 }, timeout: { attempts: 1 } } });
    expect(Object.isFrozen(tool.retry!.byKind!.network)).toBe(true);
    expect(defineTool({ ...base, retry: { attempts: 3 } }).retry).toEqual({ attempts: 3, backoffMs: 100, maxBackoffMs: 5_000 });
  });

  it.each([
    [{ byKind: { aborted: { attempts: 2 } } }, /cannot name "aborted"/],
    [{ byKind: { flaky: { attempts: 2 } } }, /unknown kind "flaky"; allowed: execution, timeout, network, rate_limit/],
    [{ byKind: { network: { tries: 2 } } }, /retry\.byKind\.network has an unknown option "tries"/],
    [{ byKind: { network: { attempts: 0 } } }, /retry\.byKind\.network\.attempts must be an integer from 1/],
    [{ byKind: { network: { backoffMs: 500, maxBackoffMs: 100 } } }, /maxBackoffMs \(100\) must not be less than its backoffMs \(500\)/],
    [{ byKind: [] }, /retry\.byKind must be an object/],
  ])('refuses %j', (retry, message) => {
    expect(() => defineTool({ ...base, retry: retry as ToolRetryPolicy })).toThrow(message);
  });
});

describe('an agent whose tool times out in its own words', () => {
  it('sees a timeout, retried as the policy says', async () => {
    let attempts = 0;
    const shell = defineTool({
      name: 'run_command',
      description: 'Run a shell command.',
      parameters: { type: 'object', properties: { command: { type: 'string', maxLength: 200 } }, required: ['command'] },
      readOnly: true,
      retry: { attempts: 1, byKind: { timeout: { attempts: 2, backoffMs: 0 } } },
      execute: () => {
        if (++attempts === 1) throw new Error('Command timed out after 120000ms');
        return 'built';
      },
    });
    const provider = scriptedProvider(['<ACTION><run_command><command>make</command></run_command></ACTION>', 'Built.']);
    const agent = createAgent({ name: 'builder', tools: [shell], provider });
    const failed: string[] = [];
    agent.bus.on('tool.failed', (event) => void failed.push(event.data.error.kind));
    const result = await agent.run('Build it.');
    expect(failed).toEqual(['timeout']);
    expect(result.calls[0]).toMatchObject({ outcome: 'completed', attempts: 2, output: 'built' });
  });
});
