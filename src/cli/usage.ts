import type { SceneDefinition } from '../scene/define-scene.js';
import { describeSceneOptions } from './scene-options.js';

/** `troupe --help`. */
export const USAGE = `Usage:
  troupe run <scene> [flags] [scene flags]   run a scene from scenes/
  troupe run <file.ts|file.js> [flags] …     run the scene a file exports
  troupe resume <session.jsonl> [flags]      continue the run a log recorded (after a crash
                                             or a stop), appending to the same log
  troupe replay <session.jsonl> [--json]     run a logged scene again from the log's model
                                             replies and report the first event that differs
  troupe list                                list the scenes, with their own flags
  troupe inspect <session.jsonl> [--port N] [--host ADDR]
                                             serve a session log in the inspector
  troupe inspect --redis URL --scene NAME [--redis-stream KEY] [--port N] [--host ADDR]
                                             serve a scene running in another process,
                                             live from its Redis stream
  troupe worker --redis URL [--scene NAME] [--once]
                                             join runs across workers and run their
                                             turns (see troupe worker --help)
  troupe help                                this text

Run flags:
  --ticks N        ticks to run (default: the scene's own)
  --seed S         integer seed for the agents' random choices (default: random, printed)
  --log FILE       record every bus event to a new JSONL session log (an existing one is
                   refused: continue it with troupe resume FILE)
  --checkpoints N  with --log, a checkpoint of the scene every N ticks (default: every
                   10,000 events; 0: none): a resume starts from the newest
  --quiet          print only the final summary line
  --json           print every bus event as one JSON line on stdout (summary on stderr)
  --model P:M      agents with instructions think with a real model: openai:gpt-4o-mini,
                   anthropic:claude-sonnet-4-5, gemini:gemini-2.5-flash, ollama:qwen2.5,
                   cassette:FILE (a recorded run, offline). See docs/providers.md.
  --protocol X     xml (default) or native function calling, for --model
  --record FILE    record the model's calls to a cassette, for --model
  --inspect        serve the inspector (live page, pause/step, approvals) on 127.0.0.1;
                   its URL with the token goes to stderr; it keeps serving after the scene
                   ends, until Ctrl-C. See docs/inspector.md.
  --port N         the inspector's port, for --inspect (default: any free one)
  --host ADDR      the inspector's address, for --inspect (default 127.0.0.1; anything
                   else is warned about: the page can approve tool calls)
  --paused         with --inspect, hold a stepped scene before its first tick until
                   Resume or Step on the page
  --mcp "CMD"      start an MCP server (split like a shell would, no shell run) and give
                   every member its tools; repeatable. Needs @modelcontextprotocol/sdk.
                   See docs/mcp.md.
  --approve X      how tool calls that need approval are answered: ask (the page decides;
                   the default with --inspect), none (denied at once; the default without),
                   all (approved at once)
  --redis URL      send every bus event to the Redis stream troupe:<scene>:events at URL
                   (redis://[user:password@]host:6379; needs ioredis and Redis 6.2+), for
                   troupe inspect --redis and other processes. See docs/distributed.md.
  --redis-stream KEY  the stream's key instead, with --redis
  --workers N      with --redis, run the scene's agents in N worker processes started here
                   (the cast split into --partitions P, default 16); this process keeps the
                   clock. See docs/distributed-workers.md.
  --wait-workers   with --workers, start none: wait for N troupe worker processes to join
  --claim-idle-ms MS  with --workers, how long a dead worker's turn waits before another
                   worker takes it over (default 5000)
  --redis-name NAME   with --workers, the name the run's keys go under (default the scene's)
  -h, --help       help; with a scene, its own flags too

Environment: TROUPE_LOG_LEVEL (default warn), TROUPE_SCENES_DIR, NO_COLOR; for --model
OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, GOOGLE_API_KEY (or GEMINI_API_KEY),
OLLAMA_BASE_URL (several keys: comma-separated).
Exit codes: 0 done, 1 the scene failed (replay: the run left its log), 2 usage error,
130 Ctrl-C, 143 SIGTERM. See docs/cli.md and docs/durability.md.`;

/** `troupe run <scene> --help`: the scene's description, the common flags and its own. */
export function runUsage(name: string, definition: SceneDefinition): string {
  const own = describeSceneOptions(definition.options ?? {});
  const lines = [
    `Usage: troupe run ${name} [--ticks N] [--seed S] [--log FILE] [--quiet | --json]${own.length > 0 ? ' [scene flags]' : ''}`,
    '',
    `  ${definition.description}`,
    `  Runs ${definition.ticks} tick${definition.ticks === 1 ? '' : 's'} unless --ticks says otherwise.`,
  ];
  if (own.length > 0) lines.push('', 'Scene flags:', ...own.map((line) => `  ${line}`));
  lines.push('', 'Run flags: see troupe --help.');
  return lines.join('\n');
}
