import type { Logger } from 'pino';

const ignore = (): void => {};

/**
 * The default logger: says nothing. A pino-shaped object rather than `pino({ level: 'silent' })`,
 * so that importing troupe does not load pino; pass your own pino logger to hear from troupe.
 */
export const silentLogger: Logger = Object.freeze({
  level: 'silent',
  fatal: ignore,
  error: ignore,
  warn: ignore,
  info: ignore,
  debug: ignore,
  trace: ignore,
  silent: ignore,
  isLevelEnabled: () => false,
  child(): Logger {
    return silentLogger;
  },
}) as unknown as Logger;
