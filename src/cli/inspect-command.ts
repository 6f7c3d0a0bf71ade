import { parseArgs } from 'node:util';
import { foldEvents } from '../inspect/state-snapshot.js';
import { readLog, type ReadLogResult } from '../record/read-log.js';
import { EXIT, type CliIo } from './cli-io.js';
import { openInspectorSession, runHistory } from './inspect-session.js';
import { followSceneStream } from './redis-flag.js';
import { hostFlag, portFlag, redisFlag } from './run-flags.js';

/** `troupe inspect --help`. */
export const INSPECT_USAGE = `Usage: troupe inspect <session.jsonl> [--port N] [--host ADDR]
       troupe inspect --redis URL --scene NAME [--redis-stream KEY] [--port N] [--host ADDR]

  Serves a session log (troupe run --log FILE) in the inspector, read-only, until Ctrl-C; or,
  with --redis, a scene running in another process (troupe run NAME --redis URL), live from its
  Redis stream, read-only.
  --port N            the port (default: any free one)
  --host ADDR         the address to bind (default 127.0.0.1; anything else is warned about)
  --redis URL         the Redis the scene writes to, e.g. redis://127.0.0.1:6379 (needs ioredis)
  --scene NAME        the scene to follow, with --redis: its stream is troupe:NAME:events
  --redis-stream KEY  the stream's key, when the run gave one`;

/**
 * `troupe inspect <log> [--port N] [--host ADDR]`: reads a session log (quarantined lines are reported, not
 * fatal) and serves it until Ctrl-C. A log whose writer stopped without closing it (killed, crashed)
 * is said to be so, here and on the page. A log that cannot be read exits 1, bad flags 2.
 */
export async function inspectCommand(args: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' }, redis: { type: 'string' }, scene: { type: 'string' }, 'redis-stream': { type: 'string' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    io.err.write(`troupe inspect: ${(error as Error).message.split('\n')[0]}; valid flags: --port, --host, --redis, --scene, --redis-stream, --help\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out.write(`${INSPECT_USAGE}\n`);
    return EXIT.ok;
  }
  if (values.redis !== undefined || values.scene !== undefined || values['redis-stream'] !== undefined) return inspectRedis(values, positionals, io);
  const [path, ...extra] = positionals;
  if (path === undefined || extra.length > 0) {
    io.err.write(`troupe inspect: ${path === undefined ? 'needs a session log' : `one log at a time (got ${positionals.length})`}, e.g. troupe inspect run.jsonl\n`);
    return EXIT.usage;
  }
  const port = portFlag(values.port);
  if (!port.ok) {
    io.err.write(`troupe inspect: ${port.problem}\n`);
    return EXIT.usage;
  }
  const host = hostFlag(values.host);
  if (!host.ok) {
    io.err.write(`troupe inspect: ${host.problem}\n`);
    return EXIT.usage;
  }
  let log: ReadLogResult;
  try {
    log = readLog(path);
  } catch (error) {
    io.err.write(`troupe inspect: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
  for (const line of log.quarantined) io.err.write(`troupe inspect: ${path} line ${line.lineNumber} skipped: ${line.reason}\n`);
  const note = (line: string): void => void io.err.write(`${line}\n`);
  const opened = await openInspectorSession({ events: log.events }, { port: port.value, host: host.value }, io, note);
  if (!opened.ok) {
    io.err.write(`troupe inspect: ${opened.problem}\n`);
    return EXIT.failed;
  }
  const story = foldEvents(log.events);
  const resumed = story.resumes.length === 0 ? '' : ` (resumed ${story.resumes.length === 1 ? 'once' : `${story.resumes.length} times`}: ${story.resumes.map((resume) => `at tick ${resume.tick}`).join(', ')})`;
  if (story.ended === 'interrupted') {
    const first = log.events[0];
    const recipe = first?.type === 'log.opened' && (first.data as { recipe?: unknown }).recipe !== undefined;
    note(`troupe inspect: ${path} ends at tick ${story.tick} without its run closing it${resumed}: its writer stopped (killed or crashed, or it is still writing)${recipe ? `; troupe resume ${path} continues it` : ''}`);
  }
  await opened.value.serveUntilInterrupted(`${log.events.length} events of ${path}${story.ended === 'interrupted' ? '' : resumed}`);
  await opened.value.close();
  return EXIT.ok;
}

/**
 * `troupe inspect --redis URL --scene NAME`: follows a scene's Redis stream from its start and
 * serves it live, read-only (the scene runs in another process: no controls), until Ctrl-C.
 * Redis that cannot be used exits 1, bad flags 2.
 */
async function inspectRedis(
  values: { port?: string | undefined; host?: string | undefined; redis?: string | undefined; scene?: string | undefined; 'redis-stream'?: string | undefined },
  positionals: readonly string[],
  io: CliIo,
): Promise<number> {
  const usage = (problem: string): number => {
    io.err.write(`troupe inspect: ${problem}\n`);
    return EXIT.usage;
  };
  if (positionals.length > 0) return usage('a session log or --redis, not both');
  const url = redisFlag(values.redis);
  if (!url.ok) return usage(url.problem);
  if (url.value === undefined) return usage('--scene and --redis-stream name a Redis stream: give --redis URL too');
  const stream = values['redis-stream'];
  if (values.scene === undefined && stream === undefined) return usage('--redis needs the scene to follow: --scene NAME (or its stream: --redis-stream KEY)');
  if (values.scene?.trim() === '' || stream?.trim() === '') return usage('--scene and --redis-stream need a value');
  const port = portFlag(values.port);
  if (!port.ok) return usage(port.problem);
  const host = hostFlag(values.host);
  if (!host.ok) return usage(host.problem);
  const note = (line: string): void => void io.err.write(`${line}\n`);
  const followed = await followSceneStream(url.value, values.scene, stream, note);
  if (!followed.ok) {
    io.err.write(`troupe inspect: ${followed.problem}\n`);
    return EXIT.failed;
  }
  const events = followed.value;
  // Recorded from the stream's first entry: the subscription starts reading on the next turn.
  const history = runHistory(events.bus);
  const opened = await openInspectorSession({ bus: events.bus, history }, { port: port.value, host: host.value }, io, note);
  if (!opened.ok) {
    await events.close();
    io.err.write(`troupe inspect: ${opened.problem}\n`);
    return EXIT.failed;
  }
  await opened.value.serveUntilInterrupted(`scene ${values.scene ?? events.header?.scene ?? '(not started yet)'} from Redis stream ${events.stream}`);
  await opened.value.close();
  await events.close();
  history.detach();
  return EXIT.ok;
}
