import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);

/** The client libraries, which only their own entries may load (they are optional peer dependencies): the model clients, the AI SDK's packages, OpenTelemetry, the MCP SDK, ioredis. */
const CLIENT_LIBRARY = /^(openai|@anthropic-ai\/sdk|@google\/genai|ai|@ai-sdk\/[^/]+|@opentelemetry\/[^/]+|@modelcontextprotocol\/sdk|ioredis)(?:\/|$)/;

/** Where a client library may be named: each adapter's folder and its provider module, and the folders of troupe/otel, troupe/mcp and troupe/redis. */
const ADAPTER_FILE = /^src\/(?:llm\/(?:openai|anthropic|gemini|ai-sdk)(?:\/|-provider\.ts$)|otel\/|mcp\/|redis\/)/;

/** Every TypeScript file under `src/`, relative to the repository. */
function sourceFiles(): string[] {
  return readdirSync(new URL('src/', root), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => `src/${path.split('\\').join('/')}`);
}

/** What a module imports, type-only and dynamic imports included. */
function specifiersOf(path: string): string[] {
  const text = readFileSync(new URL(path, root), 'utf8');
  return [...text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
}

/** The shared modules the root entry keeps (src/llm but the adapters), and the CLI. */
// Every entry point but the adapters' own, and the CLI: none may need a client library to load.
const ENTRIES = ['src/index.ts', 'src/bus/index.ts', 'src/protocol/index.ts', 'src/tools/index.ts', 'src/agent/memory/index.ts', 'src/record/index.ts', 'src/inspect/index.ts', 'src/testing/index.ts'];
const SHARED = [...sourceFiles().filter((path) => /^src\/llm\/[^/]+\.ts$/.test(path) && !ADAPTER_FILE.test(path)), ...ENTRIES, 'src/cli/main.ts'];

/**
 * A resolve hook that fails every client library the way Node does on a host without it, so a
 * module that loads one fails to import.
 */
const HIDE_CLIENT_LIBRARIES = `
export async function resolve(specifier, context, next) {
  const library = ${CLIENT_LIBRARY}.exec(specifier)?.[1];
  if (library === undefined) return next(specifier, context);
  const error = new Error("Cannot find package '" + library + "' imported from " + context.parentURL);
  throw Object.assign(error, { code: 'ERR_MODULE_NOT_FOUND' });
}`;

/** Runs in a fresh Node (through tsx) with the client libraries hidden; prints what each step gave. */
const PROBE = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HIDE_CLIENT_LIBRARIES)}));
const root = ${JSON.stringify(root.href)};
const outcome = (promise) => promise.then(() => 'loaded', (error) => error.message);
const report = { shared: {}, specs: {} };
for (const path of ${JSON.stringify(SHARED)}) report.shared[path] = await outcome(import(new URL(path, root)));
const { resolveModel } = await import(new URL('src/llm/resolve-model.ts', root));
for (const spec of ['openai:gpt-4o', 'ollama:qwen2.5', 'anthropic:claude-sonnet-4-5', 'gemini:gemini-2.5-flash']) {
  report.specs[spec] = await outcome(resolveModel(spec, { env: {} }));
}
report.adapter = await outcome(import(new URL('src/llm/openai/index.ts', root)));
// The AI SDK adapter names the AI SDK in types only: the model object brings its own code.
report.aiSdk = await outcome(import(new URL('src/llm/ai-sdk/index.ts', root)));
report.aiSdkHidden = await outcome(import('@ai-sdk/provider'));
const { openMcpServers } = await import(new URL('src/cli/mcp-servers.ts', root));
report.mcp = await outcome(openMcpServers([['some-server']], {}, undefined));
console.log(JSON.stringify(report));
`;

type Report = { shared: Record<string, string>; specs: Record<string, string>; adapter: string; aiSdk: string; aiSdkHidden: string; mcp: string };

describe('the module graph', () => {
  it('names no client library outside the adapters, not even in a type import', () => {
    const named = sourceFiles()
      .filter((path) => !ADAPTER_FILE.test(path))
      .flatMap((path) => specifiersOf(path).filter((specifier) => CLIENT_LIBRARY.test(specifier)).map((specifier) => `${path}: ${specifier}`));
    expect(named).toEqual([]);
  });

  it('loads the shared modules and the CLI without any client library, and --model and --mcp ask for the one they need', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], { cwd: root });
    const report = JSON.parse(stdout) as Report;
    expect(Object.keys(report.shared)).toEqual(expect.arrayContaining(['src/llm/types.ts', 'src/llm/resolve-model.ts', 'src/llm/cassette.ts']));
    expect(report.shared).toEqual(Object.fromEntries(SHARED.map((path) => [path, 'loaded'])));
    expect(report.specs).toEqual({
      'openai:gpt-4o': 'openai:gpt-4o needs the openai package: npm install openai@6',
      'ollama:qwen2.5': 'ollama:qwen2.5 needs the openai package: npm install openai@6',
      'anthropic:claude-sonnet-4-5': 'anthropic:claude-sonnet-4-5 needs the @anthropic-ai/sdk package: npm install @anthropic-ai/sdk@1',
      'gemini:gemini-2.5-flash': 'gemini:gemini-2.5-flash needs the @google/genai package: npm install @google/genai@1',
    });
    // The hook does hide them: an adapter's own entry fails to load.
    expect(report.adapter).toMatch(/^Cannot find package 'openai' imported from /);
    expect(report.aiSdkHidden).toMatch(/^Cannot find package '@ai-sdk\/provider'/);
    expect(report.aiSdk).toBe('loaded');
    // --mcp loads troupe/mcp only when given, and names the SDK it needs.
    expect(report.mcp).toBe('--mcp needs the @modelcontextprotocol/sdk package: npm install @modelcontextprotocol/sdk@1');
  });
});
