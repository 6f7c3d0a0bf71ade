import type { AdapterLoader } from '../llm/resolve-model.js';
import type { McpTools, McpToolsOptions } from '../mcp/index.js';
import { scenesDirectory } from './scene-loader.js';

/**
 * Exit codes of `troupe`: done, the scene failed, a usage error, interrupted (128 + SIGINT) and
 * terminated (128 + SIGTERM), as a shell reports a process those signals ended.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130, terminated: 143 } as const;

/** A signal that asks a run to stop: Ctrl-C, or `kill` and process managers (SIGTERM). */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** The exit code of a run a signal stopped (an absent signal is Ctrl-C). */
export function exitCodeOf(signal: StopSignal | undefined): number {
  return signal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
}

/** Loads `troupe/mcp` for `--mcp` (a test passes one that fails as a missing package would). */
export type McpLoader = () => Promise<{ mcpTools: (options: McpToolsOptions) => Promise<McpTools> }>;

/** Environment variables, as `process.env` holds them. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * What `main` can be given instead of the process's own streams, environment, clock and signals,
 * so the whole command runs inside a test without spawning.
 */
export type CliOptions = {
  /** The folder of scene folders (default: `TROUPE_SCENES_DIR`, else the package's `scenes/`). */
  scenesDir?: string | URL;
  /** Default `process.env` (`NO_COLOR`, `TROUPE_LOG_LEVEL`, `TROUPE_SCENES_DIR`). */
  env?: Env;
  /** Timestamps of bus events (default `Date.now`). */
  clock?: () => number;
  /** Wall time for the progress bar's throttle and rate (default `Date.now`). */
  now?: () => number;
  /**
   * Subscribes to stop signals; returns the unsubscribe (default: `SIGINT` and `SIGTERM` on the
   * process). A listener called without a signal takes it for Ctrl-C.
   */
  interrupts?: (listener: (signal?: StopSignal) => void) => () => void;
  /** Ends the process at once: a second Ctrl-C or SIGTERM (default `process.exit`). */
  exit?: (code: number) => void;
  /** How `--model` loads a provider's adapter (default: its entry module); tests make one fail as a missing package. */
  loadAdapter?: AdapterLoader;
  /** How `--mcp` loads `troupe/mcp` (default: its entry module); tests make it fail as a missing package. */
  loadMcp?: McpLoader;
};

/** Everything a command writes to and reads from, resolved. */
export type CliIo = {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: Env;
  scenesDir: URL;
  clock: () => number;
  now: () => number;
  interrupts: (listener: (signal?: StopSignal) => void) => () => void;
  exit: (code: number) => void;
  loadAdapter?: AdapterLoader | undefined;
  loadMcp?: McpLoader | undefined;
};

/** Fills in the process's defaults for what the host did not give. */
export function resolveIo(out: NodeJS.WritableStream, err: NodeJS.WritableStream, options: CliOptions): CliIo {
  const env = options.env ?? process.env;
  return {
    out,
    err,
    env,
    scenesDir: scenesDirectory(options.scenesDir, env),
    clock: options.clock ?? Date.now,
    now: options.now ?? Date.now,
    interrupts: options.interrupts ?? onStopSignals,
    exit: options.exit ?? ((code) => process.exit(code)),
    loadAdapter: options.loadAdapter,
    loadMcp: options.loadMcp,
  };
}

function onStopSignals(listener: (signal?: StopSignal) => void): () => void {
  // Node passes the signal's name to its listeners.
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
  return () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
}
