import { createRequire } from 'node:module';
import type { Redis as RedisClient } from 'ioredis';

/**
 * ioredis, loaded without its RESP3 `VerbatimString`. That class `extends String`, and once any
 * class in a process extends `String`, V8 runs string code slower in the whole process: a
 * `charCodeAt` loop went from 2.7 to 10.0 ns a character here, the `<ACTION>` parse about 3×
 * slower, for every scene in a process that only wanted to reach Redis. troupe speaks RESP2, in
 * which Redis never sends a verbatim string, so a stand-in without the `String` parent takes the
 * module's place before ioredis first loads it. A process that loaded ioredis itself already
 * keeps the original (and its cost).
 */
const require = createRequire(import.meta.url);

/** A RESP3 verbatim string (`=` reply) as text and format, never made over RESP2. */
class VerbatimString {
  readonly format: string;
  private readonly text: string;

  constructor(format: string, value: unknown) {
    this.format = format;
    this.text = String(value);
  }

  toString(): string {
    return this.text;
  }

  valueOf(): string {
    return this.text;
  }
}

function load(): typeof RedisClient {
  let path: string | undefined;
  try {
    path = require.resolve('ioredis/built/resp/verbatim-string.js');
  } catch {
    // Another layout of ioredis: it loads as it is.
  }
  if (path !== undefined && require.cache[path] === undefined) {
    require.cache[path] = { id: path, filename: path, loaded: true, exports: { VerbatimString } } as unknown as NodeJS.Module;
  }
  return (require('ioredis') as { Redis: typeof RedisClient }).Redis;
}

export const Redis: typeof RedisClient = load();
export type Redis = RedisClient;
