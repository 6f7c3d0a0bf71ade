import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `script` in a fresh Node process (tsx for the sources): what it prints, parsed. */
function fresh(script: string): unknown {
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' }));
}

// A class that extends String makes V8 run string code slower in the whole process; the Redis
// bus must not bring one in with ioredis.
describe('loading ioredis for the Redis bus', () => {
  it('leaves no subclass of String in the process, and the client still works as a class', () => {
    const seen = fresh(`
      import { createRequire } from 'node:module';
      const { Redis } = await import('./src/redis/load-ioredis.ts');
      const require = createRequire(process.cwd() + '/package.json');
      const { VerbatimString } = require('ioredis/built/resp/verbatim-string.js');
      const sample = new VerbatimString('txt', 'hello');
      console.log(JSON.stringify({
        subclass: VerbatimString.prototype instanceof String,
        text: String(sample),
        format: sample.format,
        sameClient: Redis === require('ioredis').Redis,
        client: typeof Redis.prototype.xadd,
      }));
    `);
    expect(seen).toEqual({ subclass: false, text: 'hello', format: 'txt', sameClient: true, client: 'function' });
  });

  it('is what a plain import of ioredis would bring in otherwise (the check can fail)', () => {
    const seen = fresh(`
      import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/package.json');
      require('ioredis');
      console.log(JSON.stringify({ subclass: require('ioredis/built/resp/verbatim-string.js').VerbatimString.prototype instanceof String }));
    `);
    expect(seen).toEqual({ subclass: true });
  });
});
