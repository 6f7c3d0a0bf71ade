import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks } from '../docs/code-blocks.js';
import { danglingReferences } from './shipped-references.js';

/**
 * troupe as a user meets it: packed (`npm pack`, which builds), installed from the tarball into a
 * fresh project with no model client library, compiled there by TypeScript with `strict`,
 * `moduleResolution: nodenext` and `skipLibCheck: false`, then run.
 */

const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
let work: string;
let project: string;

const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'troupe-consumer-'));
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root)) as { filename: string }[];
  const tarball = join(work, packed[0]!.filename);
  project = join(work, 'app');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { troupe: `file:${tarball}`, '@types/node': '^20.19.0' } }));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, outDir: 'out', types: ['node'] } }),
  );
  // The npm cache holds everything the suite's own install fetched: no network needed on a warm machine.
  run('npm', ['install', '--prefer-offline', '--no-package-lock'], project);
}, 240_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('installs without any model client library: they are optional peers', () => {
    const installed = readdirSync(join(project, 'node_modules'));
    expect(installed).toContain('troupe');
    for (const client of ['openai', '@anthropic-ai', '@google', '@ai-sdk', 'ai', '@modelcontextprotocol']) expect(installed).not.toContain(client);
  });

  it('compiles with skipLibCheck false and runs an agent and every subpath but the adapters', () => {
    writeFileSync(
      join(project, 'index.ts'),
      `import { createAgent, defineTool, scriptedProvider, type RunResult } from 'troupe';
import { createBus, patternMatcher } from 'troupe/bus';
import { parseOutput } from 'troupe/protocol';
import { createRegistry } from 'troupe/tools';
import { countTokens } from 'troupe/memory';
import { readLog } from 'troupe/record';
import { createTickGate } from 'troupe/inspect';
import { resolveModel } from 'troupe/providers';
import { testAgent } from 'troupe/testing';

const lookup = defineTool({
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  readOnly: true,
  execute: async () => ({ name: 'Ana' }),
});
const agent = createAgent({
  name: 'referee',
  tools: [lookup],
  provider: scriptedProvider(['<ACTION><lookup_player><id>7</id></lookup_player></ACTION>', 'Player 7 is Ana.']),
  bus: createBus(),
});
const result: RunResult = await agent.run('Who is player 7?');
const used = [patternMatcher, parseOutput, createRegistry, countTokens, readLog, createTickGate, resolveModel, testAgent].length;
console.log(JSON.stringify({ reason: result.reason, text: result.text, used }));
`,
    );
    run(process.execPath, [tsc, '-p', '.'], project);
    const output = run(process.execPath, ['out/index.js'], project);
    expect(JSON.parse(output)).toEqual({ reason: 'final_answer', text: 'Player 7 is Ana.', used: 8 });
  }, 120_000);

  it('runs the README\'s tour and its scene of scripted brains, compiled as a user compiles them', () => {
    const readme = codeBlocks(readFileSync(join(root, 'README.md'), 'utf8'), 'README.md').filter((block) => block.language === 'ts');
    const [tour, scene] = readme;
    expect(tour?.code).toContain("agent.run('Who is player 7?')");
    expect(scene?.code).toContain('createScene');
    writeFileSync(join(project, 'tour.ts'), tour!.code);
    writeFileSync(join(project, 'scene.ts'), scene!.code);
    run(process.execPath, [tsc, '-p', '.'], project);
    const toured = run(process.execPath, ['out/tour.js'], project);
    expect(toured.split('\n')).toEqual(expect.arrayContaining(['tool.started lookup_player', 'tool.completed lookup_player']));
    // The innkeeper pours (an exclusive world write) each time the patron's order reaches him.
    const staged = run(process.execPath, ['out/scene.js'], project).trim().split('\n');
    expect(staged[0]).toBe('keg 9');
    expect(staged.length).toBeGreaterThan(1);
  }, 120_000);

  it('ships no file that points at one it does not ship', () => {
    const installed = join(project, 'node_modules/troupe');
    expect(readdirSync(join(installed, 'dist/src')).length).toBeGreaterThan(0);
    expect(danglingReferences(installed)).toEqual([]);
  });

  it('drives an AI SDK model from troupe/ai-sdk, compiled with skipLibCheck false against the packages a user installs', () => {
    // @types/json-schema: @ai-sdk/provider's own declarations import it, and skipLibCheck false checks them.
    run('npm', ['install', '--prefer-offline', '--no-package-lock', '--no-save', '@ai-sdk/provider@3.0.19', '@ai-sdk/openai-compatible@2.0.92', '@types/json-schema@7.0.15'], project);
    writeFileSync(
      join(project, 'ai-sdk.ts'),
      `import { createAgent } from 'troupe';
import { aiSdkProvider } from 'troupe/ai-sdk';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';

const local = createOpenAICompatible({ name: 'ollama', baseURL: 'http://127.0.0.1:11434/v1' });
const provider = aiSdkProvider(local('qwen2.5'), { timeoutMs: 30_000 });
const agent = createAgent({ name: 'referee', provider });
console.log(JSON.stringify({ name: provider.name, model: provider.model, accepts: provider.accepts, agent: agent.name }));
`,
    );
    run(process.execPath, [tsc, '-p', '.'], project);
    const output = run(process.execPath, ['out/ai-sdk.js'], project);
    expect(JSON.parse(output)).toEqual({
      name: 'ollama.chat',
      model: 'qwen2.5',
      accepts: { imagesInUserMessages: false, imagesInToolResults: false },
      agent: 'referee',
    });
  }, 180_000);

  it('says which package to install when an adapter or troupe/mcp is imported without its client', () => {
    writeFileSync(join(project, 'adapter.mjs'), "await import('troupe/openai');");
    expect(() => run(process.execPath, ['adapter.mjs'], project)).toThrow(/Cannot find package 'openai'/);
    expect(existsSync(join(project, 'node_modules/troupe/dist/src/llm/openai/index.d.ts'))).toBe(true);
    writeFileSync(join(project, 'mcp.mjs'), "await import('troupe/mcp');");
    expect(() => run(process.execPath, ['mcp.mjs'], project)).toThrow(/Cannot find package '@modelcontextprotocol\/sdk'/);
    expect(existsSync(join(project, 'node_modules/troupe/dist/src/mcp/index.d.ts'))).toBe(true);
  });
});
