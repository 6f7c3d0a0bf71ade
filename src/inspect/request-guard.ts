import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Who may talk to the server: the `Host` values and origins allowed, and the token. */
export type Allowlist = { hosts: ReadonlySet<string>; origins: ReadonlySet<string>; token: string };

/** The cookie `GET /?token=` sets, so that the page's own requests carry the token. */
export const TOKEN_COOKIE = 'troupe_token';
export const TOKEN_HEADER = 'x-troupe-token';

/**
 * The allowlist for a server on `port`: loopback by name and address (`127.0.0.1:<port>`,
 * `localhost:<port>`, `[::1]:<port>`), the bound address when it is a specific one, and the
 * host's extras (`name:port`, or `name` for this port). Everything else is a foreign `Host`: a
 * DNS-rebinding page that reached 127.0.0.1 under its own name.
 */
export function createAllowlist(port: number, bindHost: string, extra: readonly string[], token: string): Allowlist {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  if (!isWildcard(bindHost)) hosts.add(`${urlHost(bindHost)}:${port}`.toLowerCase());
  for (const name of extra) hosts.add((/:\d+$/.test(name) ? name : `${name}:${port}`).toLowerCase());
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  return { hosts, origins, token };
}

/** Why the `Host` header is refused, or undefined when it is allowed. */
export function hostProblem(req: IncomingMessage, allow: Allowlist): string | undefined {
  const host = req.headers.host;
  if (host === undefined || host === '') return 'missing Host header';
  if (!allow.hosts.has(host.toLowerCase())) return `Host ${JSON.stringify(host.slice(0, 100))} is not this inspector (open the URL troupe printed)`;
  return undefined;
}

/**
 * Why the `Origin` is refused, or undefined. A present Origin must be ours. A missing one is
 * untrusted: browsers leave it out of same-origin GETs (so reads rely on the token), but every
 * browser sends it with a POST, so a state-changing request without it is refused.
 */
export function originProblem(req: IncomingMessage, allow: Allowlist, changesState: boolean): string | undefined {
  const origin = req.headers.origin;
  if (origin === undefined || origin === '') return changesState ? 'missing Origin header (required for commands)' : undefined;
  if (!allow.origins.has(origin.toLowerCase())) return `Origin ${JSON.stringify(origin.slice(0, 100))} is not allowed`;
  return undefined;
}

/**
 * Why a browser's own account of the request (`Sec-Fetch-Site`) rules it out: a subresource
 * request from another site (another port of localhost is the same *site*, not origin) never
 * reaches the token-guarded routes, whatever cookie it carries.
 */
export function fetchSiteProblem(req: IncomingMessage): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site === undefined || site === 'same-origin' || site === 'none') return undefined;
  return `cross-site request refused (Sec-Fetch-Site: ${String(site).slice(0, 40)})`;
}

/** Where a request presented the right token, if it did: `?token=`, the header, or the cookie. */
export function tokenSource(req: IncomingMessage, url: URL, token: string): 'query' | 'header' | 'cookie' | undefined {
  if (matches(url.searchParams.get('token'), token)) return 'query';
  const header = req.headers[TOKEN_HEADER];
  if (matches(Array.isArray(header) ? header[0] : header, token)) return 'header';
  // Browsers send one cookie per server that set it: several inspectors on 127.0.0.1 share the name.
  for (const value of cookieValues(req.headers.cookie, TOKEN_COOKIE)) if (matches(value, token)) return 'cookie';
  return undefined;
}

/** The `Set-Cookie` value that keeps the token for the page's own requests. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/** True when binding `host` keeps the server on this machine. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

/** True for the any-address binds (`0.0.0.0`, `::`). */
export function isWildcard(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '0.0.0.0' || bare === '::' || bare === '0:0:0:0:0:0:0:0';
}

/** A host as it appears in a URL and a `Host` header: IPv6 in brackets. */
export function urlHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  return isIP(bare) === 6 ? `[${bare}]` : bare;
}

function matches(given: string | null | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) values.push(part.slice(at + 1).trim());
  }
  return values;
}
