#!/usr/bin/env node
// The `troupe` command. An installed package runs its build; a clone that has not been built yet
// (`npm ci`, then `npx troupe …`) runs the TypeScript sources through tsx, a dependency already.
// Plain JavaScript, so that it runs before any build.
import { existsSync } from 'node:fs';

const built = new URL('../../dist/src/cli/main.js', import.meta.url);
const cli = existsSync(built) ? await import(built.href) : await fromSources();
cli.runAsCommand(process.argv.slice(2));

async function fromSources() {
  const sources = new URL('./main.ts', import.meta.url);
  if (!existsSync(sources)) {
    process.stderr.write(`troupe: neither ${built.pathname} nor ${sources.pathname} exists: reinstall the package\n`);
    process.exit(1);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(sources.href);
}
