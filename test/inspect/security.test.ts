import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, createBus } from '../../src/index.js';
import { startInspector } from '../../src/inspect/index.js';
import { control, inspect, openEvents, pageHeaders, send, TOKEN } from './helpers.js';

/** A page folder of our own, with a secret beside it and a symlink pointing at the secret. */
function pageFolder(): string {
  const root = mkdtempSync(join(tmpdir(), 'troupe-page-'));
  const page = join(root, 'page');
  mkdirSync(join(page, 'icons'), { recursive: true });
  writeFileSync(join(page, 'index.html'), '<!doctype html><title>panel</title><script type="module" src="/assets/app.js"></script>');
  writeFileSync(join(page, 'app.js'), 'export {};');
  writeFileSync(join(page, 'icons', 'dot.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(page, 'notes.txt'), 'not served');
  writeFileSync(join(page, '.env'), 'SECRET=1');
  writeFileSync(join(root, 'secret.js'), 'secret');
  symlinkSync(join(root, 'secret.js'), join(page, 'escape.js'));
  return page;
}

const CSP = "default-src 'self'; img-src 'self' data:; connect-src 'self'; script-src 'self'; style-src 'self'";

describe('inspector security', () => {
  it('refuses a foreign Host (DNS rebinding) on every route, assets included', async () => {
    const inspector = await inspect({ bus: createBus(), pageDir: pageFolder() });
    for (const host of ['evil.example', `evil.example:${inspector.port}`, '127.0.0.1:1', `127.0.0.2:${inspector.port}`]) {
      for (const path of ['/state', '/assets/app.js', `/?token=${TOKEN}`]) {
        const reply = await send(inspector.port, { path, headers: { ...pageHeaders(inspector.port), host } });
        expect([reply.status, reply.text]).toEqual([403, expect.stringMatching(/^Host .* is not this inspector/)]);
      }
    }
    for (const host of [`localhost:${inspector.port}`, `[::1]:${inspector.port}`, `LOCALHOST:${inspector.port}`]) {
      expect((await send(inspector.port, { path: '/state', headers: pageHeaders(inspector.port, { host, origin: `http://${host.toLowerCase()}` }) })).status).toBe(200);
    }
  });

  it('refuses a request without Host', async () => {
    const inspector = await inspect({ bus: createBus() });
    const socket = connect(inspector.port, '127.0.0.1');
    socket.write(`GET /state?token=${TOKEN} HTTP/1.0\r\n\r\n`);
    let answer = '';
    socket.on('data', (chunk) => (answer += String(chunk)));
    await new Promise((resolve) => socket.on('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 403/);
    expect(answer).toContain('missing Host header');
  });

  it('refuses a foreign Origin, and a POST without Origin, even with the token', async () => {
    const inspector = await inspect({ bus: createBus() });
    const { port } = inspector;
    const foreign = await send(port, { path: '/state', headers: pageHeaders(port, { origin: 'http://evil.example' }) });
    expect([foreign.status, foreign.text]).toEqual([403, 'Origin "http://evil.example" is not allowed']);
    const otherPort = await send(port, { path: '/state', headers: pageHeaders(port, { origin: 'http://127.0.0.1:1' }) });
    expect(otherPort.status).toBe(403);
    const body = JSON.stringify({ type: 'pause' });
    const headers = { 'x-troupe-token': TOKEN, 'content-type': 'application/json' };
    const noOrigin = await send(port, { method: 'POST', path: '/control', headers, body });
    expect([noOrigin.status, noOrigin.text]).toEqual([403, 'missing Origin header (required for commands)']);
    const wrongOrigin = await send(port, { method: 'POST', path: '/control', headers: { ...headers, origin: 'null' }, body });
    expect(wrongOrigin.status).toBe(403);
  });

  it('wants the token on everything but static assets: query, header or cookie', async () => {
    const inspector = await inspect({ bus: createBus(), pageDir: pageFolder() });
    const { port } = inspector;
    for (const path of ['/', '/state', '/events']) {
      const missing = await send(port, { path });
      expect([missing.status, missing.text]).toEqual([403, 'token required: open the URL troupe printed (…/?token=…)']);
      const wrong = await send(port, { path: `${path}?token=${'x'.repeat(TOKEN.length)}` });
      expect([wrong.status, wrong.text]).toEqual([403, 'wrong token']);
    }
    expect((await send(port, { path: `/state?token=${TOKEN}` })).status).toBe(200);
    expect((await send(port, { path: '/state', headers: { 'x-troupe-token': TOKEN } })).status).toBe(200);
    expect((await send(port, { path: '/state', headers: { cookie: `other=1; troupe_token=stale; troupe_token=${TOKEN}` } })).status).toBe(200);
    expect((await send(port, { path: '/assets/app.js' })).status).toBe(200);
  });

  it('serves the page on GET /?token= with an HttpOnly, SameSite=Strict cookie and the security headers', async () => {
    const inspector = await inspect({ bus: createBus(), pageDir: pageFolder() });
    expect(inspector.url).toBe(`http://127.0.0.1:${inspector.port}/?token=${TOKEN}`);
    const page = await send(inspector.port, { path: `/?token=${TOKEN}` });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>panel</title>');
    expect(page.headers['set-cookie']).toEqual([`troupe_token=${TOKEN}; HttpOnly; SameSite=Strict; Path=/`]);
    expect(page.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
    // With the cookie, no cookie is set again.
    const again = await send(inspector.port, { path: '/', headers: { cookie: `troupe_token=${TOKEN}` } });
    expect([again.status, again.headers['set-cookie']]).toEqual([200, undefined]);
    const refused = await send(inspector.port, { path: '/state' });
    expect(refused.headers['content-security-policy']).toBe(CSP);
  });

  it('serves only the page folder under /assets/: known types, no traversal, no dot-files, no symlinks out', async () => {
    const inspector = await inspect({ bus: createBus(), pageDir: pageFolder() });
    const { port } = inspector;
    const script = await send(port, { path: '/assets/app.js' });
    expect([script.status, script.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    const icon = await send(port, { path: '/assets/icons/dot.svg' });
    expect([icon.status, icon.headers['content-type']]).toEqual([200, 'image/svg+xml']);
    for (const path of ['/assets/../secret.js', '/assets/%2e%2e/secret.js', '/assets/..%2fsecret.js', '/assets/icons/..%2f..%2fsecret.js', '/assets/.env', '/assets/notes.txt', '/assets/escape.js', '/assets/%00app.js', '/assets/', '/assets/app.js%5c..']) {
      const reply = await send(port, { path });
      expect([path, reply.status]).toEqual([path, 404]);
    }
    expect((await send(port, { method: 'POST', path: '/assets/app.js', headers: pageHeaders(port) })).status).toBe(405);
  });

  it('refuses cross-site subresource requests to the API, but opens the page from a link', async () => {
    const inspector = await inspect({ bus: createBus(), pageDir: pageFolder() });
    const { port } = inspector;
    for (const site of ['cross-site', 'same-site']) {
      const reply = await send(port, { path: '/state', headers: { cookie: `troupe_token=${TOKEN}`, 'sec-fetch-site': site } });
      expect([reply.status, reply.text]).toEqual([403, `cross-site request refused (Sec-Fetch-Site: ${site})`]);
    }
    expect((await send(port, { path: `/?token=${TOKEN}`, headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(200);
    expect((await send(port, { path: '/state', headers: { ...pageHeaders(port), 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
  });

  it('answers unknown routes 404 and wrong methods 405', async () => {
    const inspector = await inspect({ bus: createBus() });
    const { port } = inspector;
    expect((await send(port, { path: '/admin', headers: pageHeaders(port) })).status).toBe(404);
    const wrong = await send(port, { method: 'DELETE', path: '/state', headers: pageHeaders(port) });
    expect([wrong.status, wrong.headers.allow]).toEqual([405, 'GET, HEAD']);
    expect((await send(port, { method: 'GET', path: '/control', headers: pageHeaders(port) })).status).toBe(405);
  });

  it('checks command bodies: JSON only, at most 2 MiB, a known type with its fields', async () => {
    const inspector = await inspect({ bus: createBus() });
    const { port } = inspector;
    const text = await send(port, { method: 'POST', path: '/control', headers: pageHeaders(port, { 'content-type': 'text/plain' }), body: '{"type":"pause"}' });
    expect([text.status, JSON.parse(text.text)]).toEqual([415, { error: 'the body must be JSON (Content-Type: application/json)' }]);
    const huge = await send(port, { method: 'POST', path: '/control', headers: pageHeaders(port, { 'content-type': 'application/json' }), body: JSON.stringify({ type: 'deny', reason: 'x'.repeat(2_200_000) }) });
    expect(huge.status).toBe(413);
    const broken = await send(port, { method: 'POST', path: '/control', headers: pageHeaders(port, { 'content-type': 'application/json' }), body: '{"type":' });
    expect(broken.status).toBe(400);
    expect(await control(port, { type: 'reboot' })).toEqual({ status: 400, body: { error: '"type" must be one of approve, deny, approveResult, rejectResult, pause, resume, step; got "reboot"' } });
    expect(await control(port, { type: 'approve', agent: 'a' })).toEqual({ status: 400, body: { error: '"callId" must be a non-empty string of at most 256 characters' } });
  });

  it('binds 127.0.0.1 by default; another address is allowed, with a warning', async () => {
    const local = await inspect({ bus: createBus() });
    expect(local.notices).toEqual([]);
    const exposed = await inspect({ bus: createBus(), host: '0.0.0.0' });
    expect(exposed.notices).toEqual([{ kind: 'exposed', host: '0.0.0.0', message: expect.stringContaining('beyond this machine') }]);
    expect(exposed.url).toBe(`http://127.0.0.1:${exposed.port}/?token=${TOKEN}`);
    const stream = await openEvents(exposed.port);
    expect(stream.status).toBe(200);
    stream.close();
  });

  it('makes a random 64-character token when none is given, and refuses weak ones', async () => {
    const inspector = await startInspector({ bus: createBus() });
    expect(inspector.token).toMatch(/^[0-9a-f]{64}$/);
    expect(inspector.url).toContain(`?token=${inspector.token}`);
    await inspector.close();
    await expect(startInspector({ bus: createBus(), token: 'short' })).rejects.toThrow(/token must be 16 to 512 URL-safe characters/);
  });

  it('says clearly when it cannot start', async () => {
    const taken = await inspect({ bus: createBus() });
    await expect(startInspector({ bus: createBus(), port: taken.port })).rejects.toThrow(`inspector cannot listen on 127.0.0.1:${taken.port}: port ${taken.port} is in use; choose another, or 0 for any free port`);
    await expect(startInspector({ bus: createBus(), port: 70_000 })).rejects.toThrow(/port must be an integer from 0 to 65535/);
    await expect(startInspector({})).rejects.toThrow(ConfigError);
    await expect(startInspector({ events: [], bus: createBus() })).rejects.toThrow(/served read-only/);
  });
});
