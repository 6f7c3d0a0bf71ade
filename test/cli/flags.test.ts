import { describe, expect, it } from 'vitest';
import { renderProgress, createProgressBar } from '../../src/cli/progress-bar.js';
import { parseRunFlags, sceneNameOf } from '../../src/cli/run-flags.js';
import { describeSceneOptions, sceneOptionValues } from '../../src/cli/scene-options.js';
import { defaultSummary } from '../../src/cli/summary.js';
import type { SceneOptionSpec } from '../../src/index.js';
import { capture } from './helpers.js';

const specs: Record<string, SceneOptionSpec> = {
  npcs: { type: 'number', integer: true, min: 1, max: 1000, default: 3, description: 'how many NPCs' },
  speed: { type: 'number', min: 0, default: 1.5, description: 'how fast' },
  weather: { type: 'string', choices: ['sun', 'rain'], default: 'sun', description: 'the weather' },
  name: { type: 'string', default: 'Inn', description: 'the inn’s name' },
  music: { type: 'boolean', default: true, description: 'a bard plays' },
};

describe('run flags', () => {
  it('takes --workers with --redis, and says what its companions need', () => {
    const parsed = parseRunFlags(['crowd', '--redis', 'redis://127.0.0.1:6379', '--workers', '3', '--wait-workers', '--partitions', '8', '--claim-idle-ms', '800', '--redis-name', 'crowd-b']);
    expect(parsed.ok && { workers: parsed.value.workers, wait: parsed.value.waitWorkers, partitions: parsed.value.partitions, claim: parsed.value.claimIdleMs, name: parsed.value.redisName }).toEqual({ workers: 3, wait: true, partitions: 8, claim: 800, name: 'crowd-b' });
    const problem = (args: string[]) => {
      const result = parseRunFlags(['crowd', ...args]);
      return result.ok ? undefined : result.problem;
    };
    expect(problem(['--workers', '2'])).toBe('--workers runs the scene across worker processes through Redis: give --redis URL too');
    expect(problem(['--redis', 'redis://h:6379', '--partitions', '4'])).toBe('--partitions goes with --workers N');
    expect(problem(['--redis', 'redis://h:6379', '--workers', '0'])).toBe('--workers must be a positive integer; got "0"');
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--log', 'a.jsonl'])).toBe('--workers does not go with --log, --record or --mcp yet: follow the run with --inspect, or troupe inspect --redis');
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--model', 'openai:gpt-4o-mini'])).toBeUndefined();
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--model', 'openai:gpt-4o-mini', '--record', 'a.jsonl'])).toBe('--workers does not go with --log, --record or --mcp yet: follow the run with --inspect, or troupe inspect --redis');
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--inspect'])).toBeUndefined();
    expect(parseRunFlags(['crowd', '--redis', 'redis://h:6379', '--workers', '2', '--inspect'])).toMatchObject({ ok: true, value: { approve: 'none', inspect: true } });
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--inspect', '--approve', 'ask'])).toMatch(/^--approve ask leaves approvals to the inspector's page, which cannot answer for agents on workers/);
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--inspect', '--paused'])).toMatch(/^--paused holds a scene in this process/);
    expect(problem(['--redis', 'redis://h:6379', '--workers', '2', '--claim-idle-ms', '50'])).toBe('--claim-idle-ms must be an integer, 100 or more; got "50"');
  });

  it('finds the scene name wherever the common flags are', () => {
    expect(sceneNameOf(['--ticks', '5', 'tavern', '--json'])).toBe('tavern');
    expect(sceneNameOf(['--json'])).toBeUndefined();
  });

  it('parses the common flags and the scene’s, with defaults', () => {
    const parsed = parseRunFlags(['tavern', '--ticks', '5', '--seed=-3', '--log', 'a.jsonl', '--json', '--npcs', '1000', '--speed=0.25', '--no-music'], specs);
    expect(parsed).toEqual({
      ok: true,
      value: { scene: 'tavern', ticks: 5, seed: -3, log: 'a.jsonl', quiet: false, json: true, help: false, inspect: false, paused: false, mcp: [], approve: 'none', options: { npcs: 1000, speed: 0.25, weather: 'sun', name: 'Inn', music: false } },
    });
    expect(parseRunFlags(['tavern', '--inspect', '--port', '4000', '--host', '0.0.0.0', '--paused'], specs)).toMatchObject({
      ok: true,
      value: { inspect: true, port: 4000, host: '0.0.0.0', paused: true, approve: 'ask' },
    });
    expect(parseRunFlags(['tavern'], specs)).toMatchObject({ ok: true, value: { ticks: undefined, seed: undefined, options: { npcs: 3, music: true } } });
  });

  it.each([
    [['--npcs', '1.5'], '--npcs must be an integer from 1 to 1000; got "1.5"'],
    [['--npcs', '1001'], '--npcs must be an integer from 1 to 1000; got "1001"'],
    [['--npcs', ''], '--npcs must be an integer from 1 to 1000; got ""'],
    [['--speed=-1'], '--speed must be a number >= 0; got "-1"'],
    [['--seed', '-3'], '--seed needs a value; one that starts with "-" goes after "=", as in --seed=-3'],
    [['--speed', 'Infinity'], '--speed must be a number >= 0; got "Infinity"'],
    [['--weather', 'snow'], '--weather must be one of sun, rain; got "snow"'],
    [['--seed', '1e3'], '--seed must be an integer; got "1e3"'],
    [['--seed', '99999999999999999999'], '--seed must be an integer; got "99999999999999999999"'],
  ])('rejects %j', (args, problem) => {
    expect(parseRunFlags(['tavern', ...args], specs)).toEqual({ ok: false, problem });
  });

  it('describes scene options for help and list', () => {
    expect(describeSceneOptions(specs)).toEqual([
      '--npcs <integer>      how many NPCs (default 3; from 1 to 1000)',
      '--speed <number>      how fast (default 1.5; >= 0)',
      '--weather <sun|rain>  the weather (default "sun")',
      '--name <text>         the inn’s name (default "Inn")',
      '--music / --no-music  a bard plays (default on)',
    ]);
  });

  it('leaves an option at its default when the flag is absent', () => {
    expect(sceneOptionValues(specs, {})).toEqual({ ok: true, value: { npcs: 3, speed: 1.5, weather: 'sun', name: 'Inn', music: true } });
  });
});

describe('summary and progress', () => {
  it('summarizes a run with its reason, counts and seed', () => {
    const usage = { modelCalls: 0, tokens: 0, toolCalls: 0, wallMs: 0 };
    expect(defaultSummary('tavern', { reason: 'ticks', tick: 20, turns: 45, failures: 1, usage, wallMs: 12 }, 42)).toBe('tavern ended (ticks): 20 ticks, 45 turns, 1 failure; seed 42');
    expect(defaultSummary('tavern', { reason: 'stopped', detail: 'interrupted', tick: 1, turns: 1, failures: 0, usage, wallMs: 3 }, 7)).toBe(
      'tavern ended (stopped: interrupted): 1 tick, 1 turn, 0 failures; seed 7',
    );
  });

  it('renders the bar and cuts it to the terminal', () => {
    expect(renderProgress({ tick: 50, total: 200, turns: 1234 }, 2_000, 120)).toBe('[█████               ]  50/200 ticks · 1234 turns · 617.0 turns/s · 2.0 s');
    expect(renderProgress({ tick: 0, total: 10, turns: 0 }, 0, 20)).toHaveLength(19);
  });

  it('updates at most once per interval, erases itself, and redraws after other output', () => {
    let now = 0;
    const err = capture({ tty: true });
    const bar = createProgressBar({ stream: err.stream, now: () => now, intervalMs: 100 });
    bar.clear(); // nothing drawn yet: nothing to erase
    bar.update({ tick: 1, total: 10, turns: 1 });
    now = 50;
    bar.update({ tick: 2, total: 10, turns: 2 });
    now = 100;
    bar.update({ tick: 3, total: 10, turns: 3 });
    bar.clear();
    let draws = err.text().split('\r\x1b[2K').filter((part) => part !== '');
    expect(draws).toHaveLength(2);
    expect(draws[1]).toMatch(/ 3\/10 ticks/);
    expect(err.text().endsWith('\r\x1b[2K')).toBe(true);
    // After other output took the line, the bar comes back at once, whatever the interval.
    bar.redraw();
    bar.redraw(); // already visible: no second copy
    draws = err.text().split('\r\x1b[2K').filter((part) => part !== '');
    expect(draws).toHaveLength(3);
    expect(draws[2]).toMatch(/ 3\/10 ticks/);
  });
});
