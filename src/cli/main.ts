#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { EXIT, resolveIo, type CliOptions } from './cli-io.js';
import { inspectCommand } from './inspect-command.js';
import { listCommand } from './list-command.js';
import { replayCommand } from './replay-command.js';
import { resumeCommand } from './resume-command.js';
import { runCommand } from './run-command.js';
import { USAGE } from './usage.js';
import { workerCommand } from './worker-command.js';

export type { CliOptions } from './cli-io.js';

/**
 * The `troupe` command: `run <scene>`, `resume <log>`, `replay <log>`, `list`, `inspect <log>` and `worker`. Resolves with the exit code
 * (0 done, 1 the scene failed, 2 usage error, 130 Ctrl-C, 143 SIGTERM) instead of exiting, so tests call
 * it directly with in-memory streams.
 *
 * @example
 * const code = await main(['run', 'tavern', '--ticks', '5', '--json'], process.stdout, process.stderr);
 */
export async function main(
  argv: readonly string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
  options: CliOptions = {},
): Promise<number> {
  const io = resolveIo(out, err, options);
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await runCommand(rest, io);
      case 'list':
        return await listCommand(rest, io);
      case 'inspect':
        return await inspectCommand(rest, io);
      case 'resume':
        return await resumeCommand(rest, io);
      case 'replay':
        return await replayCommand(rest, io);
      case 'worker':
        return await workerCommand(rest, io);
      case 'help':
      case '--help':
      case '-h':
        out.write(`${USAGE}\n`);
        return EXIT.ok;
      case undefined:
        err.write(`${USAGE}\n`);
        return EXIT.usage;
      default:
        err.write(`troupe: unknown command "${command}" (commands: run, resume, replay, list, inspect, worker, help)\n`);
        return EXIT.usage;
    }
  } catch (error) {
    // Our own bug, not the scene's (those are caught where they happen): show all of it.
    err.write(`troupe: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.failed;
  }
}

// Run when executed (`node dist/src/cli/main.js`, `tsx src/cli/main.ts`), not when imported by
// tests or by the `troupe` bin, which calls `runAsCommand` itself.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) runAsCommand(process.argv.slice(2));

/**
 * Runs `main` as the process's command: its exit code becomes the process's, once the output has
 * been written.
 */
export function runAsCommand(argv: readonly string[]): void {
  // `troupe run x --json | head`: once the reader is gone, stop quietly, as Unix tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT.ok);
  });
  let done = false;
  // A scene that waits on work nothing can finish lets the event loop empty: not a success.
  process.once('beforeExit', () => {
    if (done) return;
    process.stderr.write('troupe: the scene stopped making progress: it waits on work that can never finish (a promise nothing settles)\n');
    process.exitCode = EXIT.failed;
  });
  main(argv).then((code) => {
    done = true;
    process.exitCode = code;
    exitWhenFlushed(code);
  });
}

/**
 * Leaves once what was written has reached stdout and stderr: a tool that ignored its abort, or a
 * timer a scene left running, must not keep a finished command alive.
 */
function exitWhenFlushed(code: number): void {
  let waiting = 2;
  const flushed = (): void => {
    if (--waiting === 0) process.exit(code);
  };
  process.stdout.write('', flushed);
  process.stderr.write('', flushed);
}
