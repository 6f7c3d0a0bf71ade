import { parseArgs } from 'node:util';
import type { SceneRecipe } from '../bus/event-data.js';
import { readRecipe } from '../record/resume-scene.js';
import type { ApprovalPolicy } from './approval-policy.js';
import { EXIT, type CliIo } from './cli-io.js';
import { hostFlag, portFlag, type RunFlags } from './run-flags.js';
import { runScene } from './run-scene.js';
import { loadRecipeScene } from './scene-recipe.js';

/** `troupe resume --help`. */
export const RESUME_USAGE = `Usage: troupe resume <session.jsonl> [--quiet | --json] [--inspect [--port N] [--host ADDR] [--paused]] [--approve X]

  Continues the scene a session log recorded (troupe run --log FILE) after a crash or a stop, to
  the end it would have reached, appending to the same log: from its newest checkpoint, replaying
  what the log holds after it (no model asked again, no finished call run again), then live. The
  log says which scene, options, seed, ticks, model and MCP servers; model keys come from the
  environment, as for troupe run.
  --quiet, --json, --inspect, --port, --host, --paused   as for troupe run
  --approve X   how approvals are answered from here on (default: as the run did; ask with
                --inspect; a run that asked without a page now denies)`;

const FLAGS = {
  quiet: { type: 'boolean' },
  json: { type: 'boolean' },
  inspect: { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  paused: { type: 'boolean' },
  approve: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * `troupe resume <log>`: builds the scene again from the log's recipe (refusing a log whose
 * scene code changed since), and continues it as `troupe run` would have. A log that cannot be
 * resumed exits 1, bad flags 2; a second resume of a log being resumed is refused by its lock.
 */
export async function resumeCommand(args: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: FLAGS, strict: true, allowPositionals: true });
  } catch (error) {
    io.err.write(`troupe resume: ${(error as Error).message.split('\n')[0]}; valid flags: ${Object.keys(FLAGS).map((flag) => `--${flag}`).join(', ')}\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out.write(`${RESUME_USAGE}\n`);
    return EXIT.ok;
  }
  const [path, ...extra] = positionals;
  if (path === undefined || extra.length > 0) {
    io.err.write(`troupe resume: ${path === undefined ? 'needs the session log to continue' : `one log at a time (got ${positionals.length})`}, e.g. troupe resume run.jsonl\n`);
    return EXIT.usage;
  }
  const view = viewFlags(values);
  if (typeof view === 'string') {
    io.err.write(`troupe resume: ${view}\n`);
    return EXIT.usage;
  }
  let recipe: SceneRecipe;
  try {
    recipe = readRecipe(path);
  } catch (error) {
    io.err.write(`troupe: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
  const loaded = await loadRecipeScene(recipe);
  if (!loaded.ok) {
    io.err.write(`troupe: cannot resume ${path}: ${loaded.problem.message}\n`);
    return EXIT.failed;
  }
  const approve = view.approve ?? (view.inspect ? 'ask' : recipe.approve === 'ask' || recipe.approve === undefined ? 'none' : recipe.approve);
  const flags: RunFlags = {
    scene: recipe.scene,
    ticks: recipe.ticks,
    seed: recipe.seed,
    log: path,
    checkpoints: undefined,
    quiet: view.quiet,
    json: view.json,
    help: false,
    model: recipe.model?.spec,
    protocol: recipe.model?.protocol,
    record: undefined,
    inspect: view.inspect,
    port: view.port,
    host: view.host,
    paused: view.paused,
    mcp: recipe.mcp ?? [],
    approve,
    options: recipe.options as RunFlags['options'],
  };
  return runScene(loaded.value, flags, io, { log: path, hash: loaded.value.hash });
}

type ViewFlags = Pick<RunFlags, 'quiet' | 'json' | 'inspect' | 'port' | 'host' | 'paused'> & { approve: ApprovalPolicy | undefined };

/** The flags that say how to watch the resumed run; a problem as text. */
function viewFlags(values: { [K in keyof typeof FLAGS]?: (typeof FLAGS)[K]['type'] extends 'boolean' ? boolean : string }): ViewFlags | string {
  const port = portFlag(values.port);
  if (!port.ok) return port.problem;
  const host = hostFlag(values.host);
  if (!host.ok) return host.problem;
  const inspect = values.inspect === true;
  if (!inspect && (port.value !== undefined || host.value !== undefined || values.paused === true)) return '--port, --host and --paused are for the inspector: give --inspect too';
  if (values.quiet === true && values.json === true) return 'give --quiet or --json, not both';
  const approve = values.approve;
  if (approve !== undefined && approve !== 'ask' && approve !== 'all' && approve !== 'none') return `--approve must be ask, all or none; got ${JSON.stringify(approve)}`;
  return { quiet: values.quiet === true, json: values.json === true, inspect, port: port.value, host: host.value, paused: values.paused === true, approve };
}
