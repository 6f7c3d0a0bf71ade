import { parseArgs } from 'node:util';
import { failure, success, type Outcome } from '../outcome.js';
import { suggestName } from '../tools/suggest-name.js';
import type { SceneOptionSpec, SceneOptionValues } from '../scene/define-scene.js';
import type { ApprovalPolicy } from './approval-policy.js';
import { sceneArgOptions, sceneOptionValues, type ArgOption } from './scene-options.js';
import { splitCommand } from './split-command.js';

const APPROVALS: readonly ApprovalPolicy[] = ['ask', 'all', 'none'];

/** What `troupe run` was asked to do. */
export type RunFlags = {
  scene: string;
  /** Absent: the scene definition's `ticks`. */
  ticks: number | undefined;
  /** Absent: a random seed, printed so the run can be repeated. */
  seed: number | undefined;
  log: string | undefined;
  /** With `log`: a checkpoint every this many ticks (0: none; absent: every 10,000 events). */
  checkpoints: number | undefined;
  quiet: boolean;
  json: boolean;
  help: boolean;
  /** `provider:model`: members with instructions deliberate on this model instead of their brains. */
  model: string | undefined;
  /** The protocol the model speaks (default xml). */
  protocol: 'xml' | 'native' | undefined;
  /** Record the model's calls to this cassette (replay with `--model cassette:FILE`). */
  record: string | undefined;
  /** Serve the inspector on the scene's bus, and keep serving once the scene ends. */
  inspect: boolean;
  /** The inspector's port (absent or 0: any free one); only with `inspect`. */
  port: number | undefined;
  /** The address the inspector binds (absent: 127.0.0.1; anything else is warned about); only with `inspect`. */
  host: string | undefined;
  /** Hold a stepped scene before its first tick until the page resumes or steps it; only with `inspect`. */
  paused: boolean;
  /** MCP servers whose tools every member gets (`--mcp "<command>"`, repeatable), each split into words. */
  mcp: string[][];
  /** How approval requests are answered (default: `ask` with `inspect`, else `none`). */
  approve: ApprovalPolicy;
  /** Send every event to a Redis stream at this URL (`--redis redis://host:6379`). */
  redis?: string | undefined;
  /** The stream's key, with `redis` (default `troupe:<scene>:events`). */
  redisStream?: string | undefined;
  /** Run the scene across this many worker processes, with `redis` (see docs/distributed-workers.md). */
  workers?: number | undefined;
  /** With `workers`: start none, wait for that many `troupe worker` processes to join. */
  waitWorkers?: boolean;
  /** With `workers`: partitions the cast is split into, and how long a dead worker's turn waits before another takes it. */
  partitions?: number | undefined;
  claimIdleMs?: number | undefined;
  /** With `workers`: the name the run's Redis keys go under (default the scene's). */
  redisName?: string | undefined;
  options: SceneOptionValues;
};

/** The flags of `troupe run` itself, whatever the scene. */
export const COMMON_FLAGS: Record<string, ArgOption> = {
  ticks: { type: 'string' },
  seed: { type: 'string' },
  log: { type: 'string' },
  checkpoints: { type: 'string' },
  quiet: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  model: { type: 'string' },
  protocol: { type: 'string' },
  record: { type: 'string' },
  inspect: { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  paused: { type: 'boolean' },
  mcp: { type: 'string', multiple: true },
  approve: { type: 'string' },
  redis: { type: 'string' },
  'redis-stream': { type: 'string' },
  workers: { type: 'string' },
  'wait-workers': { type: 'boolean' },
  partitions: { type: 'string' },
  'claim-idle-ms': { type: 'string' },
  'redis-name': { type: 'string' },
};

/**
 * The scene named after `run`: the first positional argument, read leniently because the scene's
 * own flags are unknown until the scene is loaded. Scene flags therefore go after the name.
 */
export function sceneNameOf(args: readonly string[]): string | undefined {
  const { tokens } = parseArgs({ args: [...args], options: COMMON_FLAGS, strict: false, allowPositionals: true, tokens: true });
  const first = tokens.find((token) => token.kind === 'positional');
  return first?.kind === 'positional' ? first.value : undefined;
}

/**
 * Parses the arguments after `run` strictly, with the scene's options as extra flags. Every
 * problem names the flag and what it allows; an unknown flag lists the valid ones.
 */
export function parseRunFlags(args: readonly string[], specs: Readonly<Record<string, SceneOptionSpec>> = {}): Outcome<RunFlags, string> {
  const options = { ...sceneArgOptions(specs), ...COMMON_FLAGS };
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    return failure(argsProblem(error as Error, Object.keys(options)));
  }
  const { values, positionals } = parsed;
  const [scene, ...extra] = positionals;
  if (scene === undefined) return failure('run needs a scene name (see: troupe list)');
  if (extra.length > 0) return failure(`unexpected argument ${JSON.stringify(extra[0])} (scene options are flags: --name value)`);
  const ticks = integerFlag('ticks', values.ticks, 1);
  if (!ticks.ok) return ticks;
  const seed = integerFlag('seed', values.seed, Number.MIN_SAFE_INTEGER);
  if (!seed.ok) return seed;
  const log = values.log as string | undefined;
  if (log !== undefined && log.trim() === '') return failure('--log needs a file path, e.g. --log run.jsonl');
  const checkpoints = integerFlag('checkpoints', values.checkpoints, 0);
  if (!checkpoints.ok) return checkpoints;
  if (checkpoints.value !== undefined && log === undefined) return failure('--checkpoints is how often a --log is checkpointed: give --log too');
  const model = values.model as string | undefined;
  if (model !== undefined && !/^[a-z]+:\S/i.test(model.trim())) {
    return failure(`--model needs <provider>:<model>, e.g. --model openai:gpt-4o-mini (got ${JSON.stringify(model)})`);
  }
  const protocol = values.protocol as string | undefined;
  if (protocol !== undefined && protocol !== 'xml' && protocol !== 'native') return failure(`--protocol must be xml or native, got ${JSON.stringify(protocol)}`);
  if (protocol !== undefined && model === undefined) return failure('--protocol applies to a model: give --model too');
  const record = values.record as string | undefined;
  if (record !== undefined && (model === undefined || record.trim() === '')) return failure('--record FILE records a model\'s calls: give --model too');
  const port = portFlag(values.port);
  if (!port.ok) return port;
  if (port.value !== undefined && values.inspect !== true) return failure("--port is the inspector's port: give --inspect too");
  const host = hostFlag(values.host);
  if (!host.ok) return host;
  if (host.value !== undefined && values.inspect !== true) return failure("--host is the inspector's address: give --inspect too");
  if (values.paused === true && values.inspect !== true) return failure('--paused holds the scene for the inspector\'s page: give --inspect too');
  const mcp: string[][] = [];
  for (const command of (values.mcp ?? []) as string[]) {
    const words = splitCommand(command);
    if (!words.ok) return failure(`--mcp needs the command that starts an MCP server, e.g. --mcp "npx -y @modelcontextprotocol/server-memory": ${words.problem}`);
    mcp.push(words.value);
  }
  // On workers the page is read-only: nobody could answer, so `ask` is never the default there.
  const onWorkers = values.workers !== undefined;
  const approve = (values.approve as string | undefined) ?? (values.inspect === true && !onWorkers ? 'ask' : 'none');
  if (!APPROVALS.includes(approve as ApprovalPolicy)) return failure(`--approve must be ask, all or none; got ${JSON.stringify(approve)}`);
  if (onWorkers && approve === 'ask') return failure('--approve ask leaves approvals to the inspector\'s page, which cannot answer for agents on workers: use --approve all or none');
  if (onWorkers && values.paused === true) return failure('--paused holds a scene in this process; a run on workers cannot be paused from the page');
  const redis = redisFlag(values.redis);
  if (!redis.ok) return redis;
  const redisStream = values['redis-stream'] as string | undefined;
  if (redisStream !== undefined && redis.value === undefined) return failure("--redis-stream is the key of the scene's Redis stream: give --redis too");
  if (redisStream !== undefined && redisStream.trim() === '') return failure('--redis-stream needs a key, e.g. --redis-stream troupe:tavern:events');
  const workers = workerFlags(values, redis.value !== undefined, log, record !== undefined || mcp.length > 0);
  if (!workers.ok) return workers;
  const sceneOptions = sceneOptionValues(specs, values as Record<string, string | boolean | undefined>);
  if (!sceneOptions.ok) return sceneOptions;
  return success({
    scene,
    ticks: ticks.value,
    seed: seed.value,
    log,
    checkpoints: checkpoints.value,
    quiet: values.quiet === true,
    json: values.json === true,
    help: values.help === true,
    model: model?.trim(),
    protocol,
    record,
    inspect: values.inspect === true,
    port: port.value,
    host: host.value,
    paused: values.paused === true,
    mcp,
    approve: approve as ApprovalPolicy,
    redis: redis.value,
    redisStream,
    ...workers.value,
    options: sceneOptions.value,
  });
}

/** `--workers N` and the flags that go with it; each needs `--redis`, and some flags do not go with workers yet. */
function workerFlags(values: Record<string, unknown>, redis: boolean, log: string | undefined, unsupported: boolean): Outcome<Pick<RunFlags, 'workers' | 'waitWorkers' | 'partitions' | 'claimIdleMs' | 'redisName'>, string> {
  const workers = integerFlag('workers', values.workers, 1);
  if (!workers.ok) return workers;
  const partitions = integerFlag('partitions', values.partitions, 1);
  if (!partitions.ok) return partitions;
  const claimIdleMs = integerFlag('claim-idle-ms', values['claim-idle-ms'], 100);
  if (!claimIdleMs.ok) return claimIdleMs;
  const redisName = values['redis-name'] as string | undefined;
  const given = ['wait-workers', 'partitions', 'claim-idle-ms', 'redis-name'].find((flag) => values[flag] !== undefined);
  if (workers.value === undefined) return given === undefined ? success({}) : failure(`--${given} goes with --workers N`);
  if (!redis) return failure('--workers runs the scene across worker processes through Redis: give --redis URL too');
  if (log !== undefined || unsupported) return failure('--workers does not go with --log, --record or --mcp yet: follow the run with --inspect, or troupe inspect --redis');
  if (partitions.value !== undefined && partitions.value > 1024) return failure(`--partitions must be at most 1024; got ${partitions.value}`);
  if (redisName !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(redisName)) return failure(`--redis-name must be 1–64 letters, digits, "_", "." or "-"; got ${JSON.stringify(redisName)}`);
  return success({ workers: workers.value, waitWorkers: values['wait-workers'] === true, partitions: partitions.value, claimIdleMs: claimIdleMs.value, redisName });
}

/** `--port N`: an integer from 0 (any free port) to 65535. */
export function portFlag(raw: unknown): Outcome<number | undefined, string> {
  if (raw === undefined) return success(undefined);
  const text = String(raw);
  const value = /^\d{1,5}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(value >= 0 && value <= 65_535)) return failure(`--port must be an integer from 0 to 65535 (0: any free port); got ${JSON.stringify(text)}`);
  return success(value);
}

/**
 * `--host ADDR`: the address the inspector binds. Only its shape is checked here; whether it is
 * an address of this machine is for `listen` to say, and anything but loopback is warned about.
 */
export function hostFlag(raw: unknown): Outcome<string | undefined, string> {
  if (raw === undefined) return success(undefined);
  const text = String(raw).trim();
  if (text === '' || /[\s/?#@]/.test(text)) return failure(`--host needs an address of this machine, e.g. --host 127.0.0.1 (the default) or --host 0.0.0.0; got ${JSON.stringify(String(raw))}`);
  return success(text);
}

/** `--redis URL`: a `redis://` or `rediss://` URL; whether it answers is for the connection to say. */
export function redisFlag(raw: unknown): Outcome<string | undefined, string> {
  if (raw === undefined) return success(undefined);
  const text = String(raw).trim();
  if (!/^rediss?:\/\/[^\s]+$/.test(text)) return failure(`--redis needs a Redis URL, e.g. --redis redis://127.0.0.1:6379; got ${JSON.stringify(String(raw))}`);
  return success(text);
}

function integerFlag(name: string, raw: unknown, min: number): Outcome<number | undefined, string> {
  if (raw === undefined) return success(undefined);
  const text = String(raw);
  const value = /^[+-]?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    return failure(`--${name} must be ${min === 1 ? 'a positive integer' : min >= 0 ? `an integer, ${min} or more` : 'an integer'}; got ${JSON.stringify(text)}`);
  }
  return success(value);
}

/** parseArgs' messages, reworded: an unknown flag gets the nearest valid one and the list of them all. */
function argsProblem(error: Error, known: readonly string[]): string {
  const code = (error as { code?: string }).code;
  const valid = `valid flags: ${known.map((name) => `--${name}`).join(', ')}`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(error.message)?.[1] ?? 'flag';
    const nearest = suggestName(flag.replace(/^-+/, '').split('=')[0]!, known);
    return `unknown flag ${flag}${nearest === undefined ? '' : ` (did you mean --${nearest}?)`}; ${valid}`;
  }
  // "Option '--ticks <value>' argument missing", "… does not take an argument", "… is ambiguous": first line only.
  const first = error.message.split('\n')[0]!.replace(/\.$/, '');
  if (code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `${first}; ${valid}`;
  if (!error.message.includes('ambiguous')) return first;
  // `--seed -3`: parseArgs takes "-3" for a flag, not the value.
  const flag = /'(--[^' ]+)/.exec(error.message)?.[1] ?? '--flag';
  return `${flag} needs a value; one that starts with "-" goes after "=", as in ${flag}=-3`;
}
