// @ts-check
/**
 * Talking back to the inspector server: the `/state` snapshot and `POST /control` commands. The
 * token comes from the page's own URL (`?token=`), as the CLI printed it; the server also set it
 * as a cookie when it served the page, but commands carry it in a header so that a cross-site
 * form can never post one (it cannot set custom headers).
 */

/** The token from `?token=` in the page's address, if there is one. */
import { errorMessage } from './error-message.js';

export function pageToken() {
  return new URL(location.href).searchParams.get('token') ?? undefined;
}

/**
 * @param {string | undefined} token
 * @returns {Record<string, string>}
 */
function tokenHeader(token) {
  return token === undefined ? {} : { 'X-Troupe-Token': token };
}

/** The server refused a request (a 4xx): retrying the same request cannot help. */
export class RefusedError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * The scene's snapshot (`GET /state`).
 *
 * @param {string | undefined} token
 * @returns {Promise<import('./model.js').Snapshot>}
 */
export async function fetchState(token) {
  const response = await fetch('/state', { headers: tokenHeader(token), cache: 'no-store', credentials: 'same-origin' });
  if (response.status >= 400 && response.status < 500) {
    const reason = (await response.text().catch(() => '')).slice(0, 200);
    throw new RefusedError(response.status, reason || `GET /state answered ${response.status}`);
  }
  if (!response.ok) throw new Error(`GET /state answered ${response.status}`);
  return response.json();
}

/**
 * @typedef {{ type: 'approve', agent: string, callId: string, args?: Record<string, unknown>, argsHash?: string }
 *   | { type: 'deny', agent: string, callId: string, reason?: string }
 *   | { type: 'approveResult', agent: string, callId: string, outputHash?: string }
 *   | { type: 'rejectResult', agent: string, callId: string, reason?: string }
 *   | { type: 'pause' } | { type: 'resume' } | { type: 'step' }} Command
 */

/**
 * Sends a command; resolves with the server's answer, or `{ error }` when it refused or could not
 * be reached (never throws: a button should say what went wrong, not break the page).
 *
 * @param {Command} command
 * @param {string | undefined} token
 * @returns {Promise<{ ok: true } | { error: string }>}
 */
export async function sendControl(command, token) {
  try {
    const response = await fetch('/control', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...tokenHeader(token) },
      body: JSON.stringify(command),
      credentials: 'same-origin',
    });
    const body = await response.json().catch(() => ({}));
    if (response.ok && body.ok === true) return { ok: true };
    return { error: typeof body.error === 'string' ? body.error : `the server answered ${response.status}` };
  } catch (error) {
    return { error: errorMessage(error) };
  }
}
