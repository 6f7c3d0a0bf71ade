import { isConnectionError, type OpenedRedis } from '../connect.js';

/**
 * Runs `command` until Redis answers it, waiting out dropped connections: a command in flight
 * when the connection drops may have landed or not, so only commands that are safe to send again
 * go through here (reads, absolute writes, scripts that commit once). Nothing is sent while the
 * connection is being checked after a reconnection; once the check has failed, rejects with the
 * connection's `lost` error (see `checkAfterReconnect`).
 */
export async function untilAnswered<T>(opened: OpenedRedis, command: () => Promise<T>): Promise<T> {
  for (;;) {
    if (!opened.ready) await reconnected(opened);
    try {
      return await opened.whileConnected(command());
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await reconnected(opened);
    }
  }
}

/**
 * Resolves once the connection is ready again; rejects with its `lost` error once it is given up.
 * It first lets the event loop turn: a socket that has just dropped still reads as ready until its
 * `close` is handled, and commands sent meanwhile fail at once, so waiting on microtasks alone
 * would spin and keep the reconnection from happening.
 */
export async function reconnected(opened: OpenedRedis, stopped: () => boolean = () => false): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  await opened.untilReady(stopped);
  if (opened.lost !== undefined) throw opened.lost;
}
