import { pino, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { failure, success, type Outcome } from '../outcome.js';
import { isTty } from './style.js';

/** The level when `TROUPE_LOG_LEVEL` is unset: a scene's warnings and errors, nothing chattier. */
export const DEFAULT_LOG_LEVEL = 'warn';

/**
 * The logger `troupe run` hands to a scene, writing to `stream` (stderr): readable lines through
 * pino-pretty on a terminal, JSON lines otherwise (for log collectors). The level comes from
 * `TROUPE_LOG_LEVEL` (`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`).
 */
export function createCliLogger(
  stream: NodeJS.WritableStream,
  env: Readonly<Record<string, string | undefined>>,
  colour: boolean,
): Outcome<Logger, string> {
  const level = env.TROUPE_LOG_LEVEL === undefined || env.TROUPE_LOG_LEVEL === '' ? DEFAULT_LOG_LEVEL : env.TROUPE_LOG_LEVEL;
  const levels = [...Object.keys(pino.levels.values), 'silent'];
  if (!levels.includes(level)) {
    return failure(`TROUPE_LOG_LEVEL must be one of ${levels.join(', ')}; got "${level}"`);
  }
  return success(pino({ name: 'troupe', level }, destination(stream, colour)));
}

function destination(stream: NodeJS.WritableStream, colour: boolean): DestinationStream {
  if (!isTty(stream)) return stream as DestinationStream;
  // pino-pretty's formatter, called in line: its stream form pipes through a transport, which
  // would write after our own messages (and not at all after an exit on a second Ctrl-C).
  const prettify = pinoPretty.prettyFactory({ colorize: colour, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' });
  return { write: (line: string) => void stream.write(prettify(line)) };
}
