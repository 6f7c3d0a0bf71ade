import { isConnectionError, type OpenedRedis } from '../connect.js';

/**
 * Runs `command` until Redis answers it, waiting out dropped connections: a command in flight
 * when the connection drops may have landed or not, so only commands that are safe to send again
 * go through here (reads, absolute writes, scripts that commit once).
 */
export async function untilAnswered<T>(opened: OpenedRedis, command: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await opened.whileConnected(command());
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await opened.untilReady(() => false);
    }
  }
}
