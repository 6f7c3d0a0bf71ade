import { parseArgs } from 'node:util';
import { foldEvents } from '../inspect/state-snapshot.js';
import { readLog, type ReadLogResult } from '../record/read-log.js';
import { EXIT, type CliIo } from './cli-io.js';
import { openInspectorSession } from './inspect-session.js';
import { hostFlag, portFlag } from './run-flags.js';

/** `troupe inspect --help`. */
export const INSPECT_USAGE = `Usage: troupe inspect <session.jsonl> [--port N] [--host ADDR]

  Serves a session log (troupe run --log FILE) in the inspector, read-only, until Ctrl-C.
  --port N      the port (default: any free one)
  --host ADDR   the address to bind (default 127.0.0.1; anything else is warned about)`;

/**
 * `troupe inspect <log> [--port N] [--host ADDR]`: reads a session log (quarantined lines are reported, not
 * fatal) and serves it until Ctrl-C. A log whose writer stopped without closing it (killed, crashed)
 * is said to be so, here and on the page. A log that cannot be read exits 1, bad flags 2.
 */
export async function inspectCommand(args: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: { port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (error) {
    io.err.write(`troupe inspect: ${(error as Error).message.split('\n')[0]}; valid flags: --port, --host, --help\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out.write(`${INSPECT_USAGE}\n`);
    return EXIT.ok;
  }
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
