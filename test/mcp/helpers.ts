import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const modules = new URL('../../node_modules/@modelcontextprotocol/', import.meta.url);

/** The entry scripts of the reference servers from npm, and of the quirky fixture server. */
export const SERVERS = {
  everything: fileURLToPath(new URL('server-everything/dist/index.js', modules)),
  filesystem: fileURLToPath(new URL('server-filesystem/dist/index.js', modules)),
  memory: fileURLToPath(new URL('server-memory/dist/index.js', modules)),
  quirky: fileURLToPath(new URL('./fixtures/quirky-server.mjs', import.meta.url)),
};

/**
 * A stdio server spec that starts `script` under `sh`, which writes the server's pid to
 * `pidFile` and then becomes the server (`exec`): the test can kill the very process troupe talks to.
 */
export function withPidFile(script: string, pidFile: string, args: string[] = []) {
  return { command: 'sh', args: ['-c', 'echo $$ > "$0"; exec "$@"', pidFile, process.execPath, script, ...args] };
}

/** The pid a `withPidFile` server wrote. */
export function pidFrom(pidFile: string): number {
  return Number(readFileSync(pidFile, 'utf8').trim());
}

/** Whether a process is alive (signal 0 only checks). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** server-everything serving Streamable HTTP as a child process, which the test can kill and start again. */
export type HttpEverything = {
  url: string;
  child: ChildProcess;
  /** What the server printed on stdout since it last started (it logs sessions there). */
  stdout(): string;
  start(): Promise<void>;
  stop(): Promise<void>;
};

/** Starts `server-everything streamableHttp` on a free port and waits until it listens. */
export async function startHttpEverything(): Promise<HttpEverything> {
  const port = await freePort();
  let stdout = '';
  const handle: HttpEverything = {
    url: `http://127.0.0.1:${port}/mcp`,
    child: undefined as unknown as ChildProcess,
    stdout: () => stdout,
    async start() {
      stdout = '';
      const child = spawn(process.execPath, [SERVERS.everything, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      handle.child = child;
      await new Promise<void>((resolve, reject) => {
        let said = '';
        child.stdout!.on('data', (chunk: Buffer) => void (stdout += String(chunk)));
        child.stderr!.on('data', (chunk: Buffer) => {
          said += String(chunk);
          if (said.includes('listening on port')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`server-everything exited (${code}) before listening: ${said}`)));
      });
    },
    async stop() {
      const { child } = handle;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
  await handle.start();
  return handle;
}
