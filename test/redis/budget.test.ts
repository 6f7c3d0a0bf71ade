import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Budget, type BudgetLimits, type Spend } from '../../src/agent/budget.js';
import { ConfigError } from '../../src/errors.js';
import { openRedisBudget, spendFromShared, type RedisBudget } from '../../src/redis/redis-budget.js';
import { failWithoutRedisUnderCi, findRedis, killOwnConnections } from './redis-server.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

const WORKER = fileURLToPath(new URL('fixtures/budget-worker.ts', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function withBudgets<T>(scene: string, limits: BudgetLimits, count: number, body: (budgets: RedisBudget[]) => Promise<T>): Promise<T> {
  const budgets: RedisBudget[] = [];
  // One after the other: the first records the limits.
  for (let index = 0; index < count; index++) budgets.push(await openRedisBudget({ url: redis!.url, scene, limits }));
  try {
    return await body(budgets);
  } finally {
    await Promise.all(budgets.map((budget) => budget.close()));
  }
}

/** Drops the wall time, which the two clocks measure differently. */
function withoutWall<T extends { wallMs: number }>(value: T): Omit<T, 'wallMs'> {
  const { wallMs: _, ...rest } = value;
  return rest;
}

describe.runIf(redis !== undefined)('a scene budget shared across processes on Redis', () => {
  const url = redis?.url ?? '';

  it('refuses, charges and words its refusals exactly as Budget does', async () => {
    const cases: { limits: BudgetLimits; steps: { mode: 'spend' | 'charge'; spend: Spend }[] }[] = [
      {
        limits: { modelCalls: 2 },
        steps: [{ mode: 'spend', spend: { modelCalls: 1 } }, { mode: 'spend', spend: { modelCalls: 1 } }, { mode: 'spend', spend: { modelCalls: 1 } }, { mode: 'spend', spend: { toolCalls: 4 } }],
      },
      {
        limits: { toolCalls: 5 },
        steps: [{ mode: 'spend', spend: { toolCalls: 2 } }, { mode: 'spend', spend: { modelCalls: 1 } }, { mode: 'spend', spend: { toolCalls: 4 } }, { mode: 'spend', spend: { toolCalls: 1 } }],
      },
      {
        limits: { tokens: 100, modelCalls: 10 },
        steps: [
          { mode: 'spend', spend: { modelCalls: 1 } },
          { mode: 'charge', spend: { tokens: 60 } },
          { mode: 'spend', spend: { modelCalls: 1 } },
          { mode: 'charge', spend: { tokens: 45, estimated: true } },
          // Tool calls of a round the model already wrote still run once tokens are used up.
          { mode: 'spend', spend: { toolCalls: 2 } },
          { mode: 'spend', spend: { modelCalls: 1 } },
          { mode: 'spend', spend: { toolCalls: 1 } },
        ],
      },
      {
        limits: { costUsd: 0.01 },
        steps: [
          { mode: 'spend', spend: { modelCalls: 1 } },
          { mode: 'charge', spend: { tokens: 1000, costUsd: 0.004 } },
          { mode: 'spend', spend: { modelCalls: 1 } },
          { mode: 'charge', spend: { tokens: 2000, costUsd: 0.006000001 } },
          { mode: 'spend', spend: { modelCalls: 1 } },
        ],
      },
      { limits: {}, steps: [{ mode: 'spend', spend: { modelCalls: 3 } }, { mode: 'charge', spend: { tokens: 7, costUsd: 0.5 } }] },
    ];
    for (const [index, { limits, steps }] of cases.entries()) {
      const scene = redis!.scene(`mirror-${index}`);
      const local = new Budget(scene, limits);
      await withBudgets(scene, limits, 1, async ([shared]) => {
        for (const { mode, spend } of steps) {
          if (mode === 'charge') {
            local.charge(spend);
            await shared!.charge(spend);
          } else {
            const expected = local.refuse(spend);
            if (expected === undefined) local.charge(spend);
            expect(await shared!.spend(spend), `${JSON.stringify(limits)} ${JSON.stringify(spend)}`).toEqual(expected);
          }
          expect(withoutWall(await shared!.usage())).toEqual(withoutWall(local.usage()));
        }
        expect(await shared!.exhausted()).toEqual(local.exhausted);
        expect(withoutWall(await shared!.snapshot())).toEqual(withoutWall(local.snapshot()));
      });
    }
  });

  it('refuses exactly at the limit across three processes, each with the same message', async () => {
    const scene = redis!.scene('procs');
    const children = Array.from({ length: 3 }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER, url, scene, '10', '6'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => void (stdout += String(chunk)));
      child.stderr.on('data', (chunk) => void (stderr += String(chunk)));
      return { closed: once(child, 'close') as Promise<[number]>, out: () => stdout, err: () => stderr };
    });
    const codes = await Promise.all(children.map((child) => child.closed));
    for (const [index, child] of children.entries()) {
      expect(child.err()).toBe('');
      expect(codes[index]![0]).toBe(0);
    }
    const lines = children.flatMap((child) => child.out().trim().split('\n'));
    const granted = lines.filter((line) => line.startsWith('granted ')).reduce((sum, line) => sum + Number(line.slice(8)), 0);
    expect(granted).toBe(10);
    const refusals = lines.filter((line) => !line.startsWith('granted '));
    expect(refusals).toHaveLength(8);
    expect(new Set(refusals)).toEqual(new Set([`budget "${scene}" exhausted: model calls 10/10`]));
    expect(await redis!.admin.hget(`troupe:${scene}:budget`, 'modelCalls')).toBe('10');
  }, 30_000);

  it('stays exhausted for every process, and is announced once', async () => {
    const scene = redis!.scene('sticky');
    await withBudgets(scene, { tokens: 50, toolCalls: 100 }, 3, async ([first, second, third]) => {
      expect(await first!.spend({ modelCalls: 1 })).toBeUndefined();
      await second!.charge({ tokens: 80 });
      expect(await third!.takeAnnouncement()).toBe(false); // not exhausted yet: nothing to announce
      const refusal = await first!.spend({ modelCalls: 1 });
      expect(refusal).toMatchObject({ kind: 'tokens', used: 80, limit: 50, message: `budget "${scene}" exhausted: tokens 80/50` });
      // A tool call alone would fit, but the refusal is sticky, in another process too.
      expect(await second!.spend({ toolCalls: 1 })).toEqual(refusal);
      expect(await third!.refuse({ toolCalls: 1 })).toEqual(refusal);
      expect((await first!.usage()).toolCalls).toBe(0);
      const announced = await Promise.all([first!, second!, third!, first!].map((budget) => budget.takeAnnouncement()));
      expect(announced.filter(Boolean)).toHaveLength(1);
      expect((await third!.snapshot()).announced).toBe(true);
      // A new run of the scene starts from nothing.
      await first!.reset();
      expect(await second!.exhausted()).toBeUndefined();
      expect(await second!.spend({ modelCalls: 1 })).toBeUndefined();
    });
  });

  it('counts wall time on Redis’s clock from the first check', async () => {
    await withBudgets(redis!.scene('wall'), { wallMs: 150 }, 2, async ([first, second]) => {
      expect((await first!.usage()).wallMs).toBe(0);
      expect(await first!.spend({ modelCalls: 1 })).toBeUndefined();
      await sleep(300);
      const refusal = await second!.spend({ toolCalls: 1 });
      expect(refusal?.kind).toBe('wallMs');
      expect(refusal!.used).toBeGreaterThanOrEqual(150);
      expect(refusal!.message).toBe(`budget "${first!.name}" exhausted: wall time ms ${refusal!.used}/150`);
    });
  });

  it('asks this process’s budgets first, then the shared one; a refusal charges nothing', async () => {
    await withBudgets(redis!.scene('mixed'), { modelCalls: 2 }, 1, async ([shared]) => {
      const own = new Budget('npc', { modelCalls: 5 });
      expect(await spendFromShared([own], shared!, { modelCalls: 1 })).toBeUndefined();
      expect(await spendFromShared([own], shared!, { modelCalls: 1 })).toBeUndefined();
      expect((await spendFromShared([own], shared!, { modelCalls: 1 }))?.budget).toBe(shared!.name);
      expect(own.usage().modelCalls).toBe(2);
      const tight = new Budget('tight', { modelCalls: 0 });
      expect((await spendFromShared([tight], shared!, { modelCalls: 1 }))?.budget).toBe('tight');
    });
  });

  it('refuses limits that are not the ones recorded, and limits Budget would refuse', async () => {
    const scene = redis!.scene('mismatch');
    await withBudgets(scene, { modelCalls: 3 }, 1, async () => {
      const other = openRedisBudget({ url, scene, limits: { modelCalls: 4 } });
      await expect(other).rejects.toBeInstanceOf(ConfigError);
      await expect(other).rejects.toThrow(/has limits \{"modelCalls":3\}, this process gives \{"modelCalls":4\}/);
    });
    await expect(openRedisBudget({ url, scene: redis!.scene('bad'), limits: { modelCalls: -1 } })).rejects.toThrow(`budget "${redis!.scene('bad')}": modelCalls must be a finite number ≥ 0, got -1`);
    await expect(openRedisBudget({ url, scene: redis!.scene('bad'), limits: { turns: 3 } as BudgetLimits })).rejects.toThrow(/unknown limit "turns"/);
  });

  it('says in a RedisError when Redis refuses a spend', async () => {
    const scene = redis!.scene('wrongtype');
    await withBudgets(scene, { modelCalls: 3 }, 1, async ([budget]) => {
      await redis!.admin.del(budget!.key);
      await redis!.admin.set(budget!.key, 'not a hash');
      const spent = budget!.spend({ modelCalls: 1 });
      await expect(spent).rejects.toMatchObject({ code: 'redis_failed' });
      await expect(spent).rejects.toThrow(new RegExp(`refused to spend budget "${scene}" \\(${budget!.key}\\): .*WRONGTYPE`));
    });
  });

  it('goes on after its connection is killed, counting each spend once', async () => {
    const scene = redis!.scene('kill');
    const notices: string[] = [];
    const budget = await openRedisBudget({ url, scene, limits: { modelCalls: 100 }, onNotice: (line) => void notices.push(line) });
    try {
      const spends: Promise<unknown>[] = [];
      for (let round = 0; round < 5; round++) {
        for (let index = 0; index < 5; index++) spends.push(budget.spend({ modelCalls: 1 }));
        if (round === 2) expect(await killOwnConnections(redis!.admin)).toBe(1);
        await sleep(20);
      }
      expect(await Promise.all(spends)).toEqual(Array.from({ length: 25 }, () => undefined));
      expect((await budget.usage()).modelCalls).toBe(25);
      expect(notices.some((line) => /lost the connection to Redis/.test(line))).toBe(true);
    } finally {
      await budget.close();
    }
  }, 20_000);
});

