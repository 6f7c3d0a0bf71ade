import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const example = new URL('docs/examples/otel-otlp.ts', root);

/**
 * Resolves `troupe` and `troupe/<subpath>` to the sources, through package.json `exports` (its
 * `./dist/….js` paths, as `./….ts`): the example runs as a user would write it, without a build.
 */
const TROUPE_FROM_SOURCE = `
import { readFileSync } from 'node:fs';
const root = ${JSON.stringify(root.href)};
const { exports } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
export async function resolve(specifier, context, next) {
  if (specifier !== 'troupe' && !specifier.startsWith('troupe/')) return next(specifier, context);
  const entry = exports[specifier === 'troupe' ? '.' : './' + specifier.slice('troupe/'.length)];
  if (entry === undefined) return next(specifier, context);
  return next(new URL(entry.import.replace(/^\\.\\/dist\\//, './').replace(/\\.js$/, '.ts'), root).href, context);
}`;

const RUN_EXAMPLE = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(TROUPE_FROM_SOURCE)}));
await import(${JSON.stringify(example.href)});
`;

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpSpan = { name: string; spanId: string; parentSpanId?: string; traceId: string; attributes: { key: string; value: OtlpValue }[] };
type OtlpRequest = { resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] };
type Received = { method: string; url: string; contentType: string; body: OtlpRequest };

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A collector stand-in on 127.0.0.1: answers every export with success and keeps what it got. */
async function collector(): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest,
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server!.address() as AddressInfo).port, received };
}

describe('the OTLP example (docs/examples/otel-otlp.ts)', () => {
  it('is the code block docs/otel.md shows', () => {
    const page = readFileSync(new URL('docs/otel.md', root), 'utf8');
    expect(page).toContain(`\`\`\`ts\n${readFileSync(example, 'utf8')}\`\`\``);
  });

  it('sends the run’s spans, linked, over OTLP/HTTP to the collector it is pointed at', async () => {
    const { port, received } = await collector();
    // Only the generic endpoint, as the example's comment says: a signal-specific one would win.
    const { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _ignored, ...inherited } = process.env;
    const env = { ...inherited, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` };
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RUN_EXAMPLE], { cwd: root, env });
    expect(stdout.trim()).toBe('Player 7 is Ana.');

    expect(received.map(({ method, url, contentType }) => ({ method, url, contentType }))).toEqual([{ method: 'POST', url: '/v1/traces', contentType: 'application/json' }]);
    const scopes = received[0]!.body.resourceSpans.flatMap((resource) => resource.scopeSpans);
    expect(scopes.map((scope) => scope.scope.name)).toEqual(['troupe']);
    const spans = scopes[0]!.spans;
    const byName = (name: string): OtlpSpan[] => spans.filter((span) => span.name === name);
    const attribute = (span: OtlpSpan, key: string): OtlpValue | undefined => span.attributes.find((entry) => entry.key === key)?.value;
    expect(spans.map((span) => span.name).sort()).toEqual(['chat script', 'chat script', 'execute_tool lookup_player', 'invoke_agent referee']);

    const [run] = byName('invoke_agent referee');
    expect(run!.parentSpanId ?? '').toBe('');
    expect(attribute(run!, 'gen_ai.operation.name')).toEqual({ stringValue: 'invoke_agent' });
    expect(attribute(run!, 'troupe.run.reason')).toEqual({ stringValue: 'final_answer' });
    for (const child of [...byName('chat script'), ...byName('execute_tool lookup_player')]) {
      expect(child.parentSpanId).toBe(run!.spanId);
      expect(child.traceId).toBe(run!.traceId);
    }
    expect(attribute(byName('execute_tool lookup_player')[0]!, 'gen_ai.tool.call.id')).toEqual({ stringValue: 'referee/1.1.1' });
  }, 30_000);
});
