import { parseArgs } from 'node:util';
import type { SceneRecipe } from '../bus/event-data.js';
import { replayScene, type ReplayReport } from '../record/replay-scene.js';
import { readRecipe } from '../record/resume-scene.js';
import { EXIT, type CliIo } from './cli-io.js';
import { createCliLogger } from './cli-logger.js';
import { openMcpServers, type McpServers } from './mcp-servers.js';
import { loadRecipeScene } from './scene-recipe.js';
import { wantsColour } from './style.js';
import { terminalSafe } from './terminal-text.js';

/** `troupe replay --help`. */
export const REPLAY_USAGE = `Usage: troupe replay <session.jsonl> [--json]

  Runs the scene a session log recorded again from its start and compares every event with the
  log, ids and times aside: the models' replies come from the log (no provider is asked, no key
  is needed), tools run for real. Prints "identical", or the first event that differs (its
  number and line, what the log has and what the run made, and a hint). Exit 0 when identical,
  1 when the run left its log (or the log cannot be replayed), 2 for bad flags.
  --json   print the report as one JSON object instead`;

/**
 * `troupe replay <log>`: a recorded run as a regression test. Loads the scene the log's recipe
 * names (saying so when its code changed since), starts its MCP servers again, and replays.
 */
export async function replayCommand(args: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (error) {
    io.err.write(`troupe replay: ${(error as Error).message.split('\n')[0]}; valid flags: --json, --help\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out.write(`${REPLAY_USAGE}\n`);
    return EXIT.ok;
  }
  const [path, ...extra] = positionals;
  if (path === undefined || extra.length > 0) {
    io.err.write(`troupe replay: ${path === undefined ? 'needs the session log to replay' : `one log at a time (got ${positionals.length})`}, e.g. troupe replay run.jsonl\n`);
    return EXIT.usage;
  }
  const logger = createCliLogger(io.err, io.env, wantsColour(io.err, io.env));
  if (!logger.ok) {
    io.err.write(`troupe: ${logger.problem}\n`);
    return EXIT.usage;
  }
  let recipe: SceneRecipe;
  try {
    recipe = readRecipe(path, 'replay');
  } catch (error) {
    io.err.write(`troupe: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
  const loaded = await loadRecipeScene(recipe);
  if (!loaded.ok) {
    io.err.write(`troupe: cannot replay ${path}: ${loaded.problem.message}\n`);
    return EXIT.failed;
  }
  let mcp: McpServers | undefined;
  let report: ReplayReport;
  try {
    if (recipe.mcp !== undefined && recipe.mcp.length > 0) mcp = await openMcpServers(recipe.mcp, io.env, logger.value, io.loadMcp);
    // Changed code is what a replay is for (does it still make the same events?): said, not refused.
    if (loaded.value.hash !== recipe.definitionHash) io.err.write(`troupe: note: the code of scene "${recipe.scene}" changed since ${path} was written\n`);
    report = await replayScene(path, {
      definition: loaded.value.definition,
      logger: logger.value,
      resolve: { env: io.env, loadAdapter: io.loadAdapter },
      ...(mcp !== undefined && { tools: mcp.tools }),
    });
  } catch (error) {
    io.err.write(`troupe: ${(error as Error).message}\n`);
    return EXIT.failed;
  } finally {
    await mcp?.close();
  }
  if (values.json === true) io.out.write(`${JSON.stringify({ identical: report.identical, events: report.events, unfinished: report.unfinished, divergence: report.divergence, message: report.message })}\n`);
  else (report.identical ? io.out : io.err).write(`${report.identical ? '' : 'troupe: '}${terminalSafe(report.message)}\n`);
  return report.identical ? EXIT.ok : EXIT.failed;
}
