#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createBus } from '../bus/bus.js';
import { serializeEnvelope } from '../bus/serialize-event.js';
import { printTranscript } from './transcript.js';
import type { SceneModule } from './scene-module.js';

const USAGE = `Usage:
  troupe run <scene> [--json] [--quiet]   run an example scene offline on scripted brains
  troupe list                             list the example scenes
Options:
  --json    print every bus event as one JSON line
  --quiet   print only the final result`;

// Both from src/cli (tsx) and dist/src/cli (built), the scenes folder is two levels up.
const scenesDir = new URL('../../scenes/', import.meta.url);

/** The `troupe` command. Returns the exit code. */
export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, quiet: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    err.write(`troupe: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const [command, name] = parsed.positionals;
  if (parsed.values.help || command === undefined) {
    (command === undefined && !parsed.values.help ? err : out).write(`${USAGE}\n`);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  if (command === 'list') {
    for (const scene of await listScenes()) out.write(`${scene.name}\t${scene.description}\n`);
    return 0;
  }
  if (command !== 'run') {
    err.write(`troupe: unknown command "${command}"\n${USAGE}\n`);
    return 2;
  }
  if (name === undefined) {
    err.write(`troupe: run needs a scene name (try: troupe list)\n`);
    return 2;
  }
  const scene = await loadScene(name, err);
  if (scene === undefined) return 1;
  const bus = createBus();
  if (parsed.values.json) bus.on('*', (event) => out.write(`${serializeEnvelope(event).text}\n`));
  else if (!parsed.values.quiet) printTranscript(bus, (line) => out.write(`${line}\n`));
  try {
    const summary = await scene.run({ bus });
    if (!parsed.values.json) out.write(`${summary}\n`);
    return 0;
  } catch (error) {
    err.write(`troupe: scene "${name}" failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    return 1;
  }
}

async function listScenes(): Promise<{ name: string; description: string }[]> {
  const entries = await readdir(scenesDir, { withFileTypes: true });
  const scenes = [];
  for (const entry of entries.filter((item) => item.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const scene = await importScene(entry.name).catch(() => undefined);
    if (scene !== undefined) scenes.push({ name: entry.name, description: scene.description });
  }
  return scenes;
}

async function loadScene(name: string, err: NodeJS.WritableStream): Promise<SceneModule | undefined> {
  if (!/^[a-z0-9][a-z0-9-]*$/i.test(name)) {
    err.write(`troupe: "${name}" is not a scene name (letters, digits and dashes)\n`);
    return undefined;
  }
  const available = (await listScenes()).map((scene) => scene.name);
  if (!available.includes(name)) {
    err.write(`troupe: no scene "${name}". Available: ${available.join(', ') || 'none'}\n`);
    return undefined;
  }
  try {
    return await importScene(name);
  } catch (error) {
    err.write(`troupe: scene "${name}" could not be loaded: ${(error as Error).message}\n`);
    return undefined;
  }
}

async function importScene(name: string): Promise<SceneModule> {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const module = (await import(new URL(`${name}/index.${extension}`, scenesDir).href)) as { scene?: SceneModule };
  if (module.scene === undefined || typeof module.scene.run !== 'function') {
    throw new Error(`scenes/${name}/index.${extension} must export \`scene\` with a run() function`);
  }
  return module.scene;
}

// Run when executed (also through npm's bin symlink), not when imported by tests.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
