/**
 * Errors thrown to the host programmer. The model's mistakes never throw: they become events and
 * observations. These classes cover what the host got wrong (bad config, a bad tool schema) and
 * the few runtime failures a caller must see (a log that cannot be written).
 */
export type TroupeErrorCode =
  | 'tool_schema_rejected'
  | 'duplicate_tool'
  | 'invalid_config'
  | 'provider_exhausted'
  | 'script_mismatch'
  | 'log_write_failed'
  | 'log_format'
  | 'agent_busy'
  | 'world_path'
  | 'world_value'
  | 'world_locked'
  | 'scene_state'
  | 'resume_refused'
  | 'replay_diverged'
  | 'mcp_connect_failed'
  | 'redis_unreachable'
  | 'redis_auth_failed'
  | 'redis_too_old'
  | 'redis_stream_mismatch'
  | 'redis_run_mismatch'
  | 'redis_run_lost'
  | 'redis_failed';

/** Base of every error troupe throws; `code` is a stable literal to branch on. */
export class TroupeError extends Error {
  readonly code: TroupeErrorCode;

  constructor(code: TroupeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A tool definition that cannot be registered (docs/protocol.md rule 18). */
export class ToolSchemaError extends TroupeError {
  readonly tool: string;

  constructor(tool: string, message: string, options?: { cause?: unknown }) {
    super('tool_schema_rejected', `tool "${tool}": ${message}`, options);
    this.tool = tool;
  }
}

/** A configuration the host passed that cannot work (missing provider, duplicate tool, bad limits). */
export class ConfigError extends TroupeError {
  constructor(message: string, code: TroupeErrorCode = 'invalid_config') {
    super(code, message);
  }
}

/** The scripted provider was asked for more turns than it has, or a turn was left unused. */
export class ScriptError extends TroupeError {
  constructor(message: string, code: TroupeErrorCode = 'script_mismatch') {
    super(code, message);
  }
}

/** The session log could not be written or read. */
export class LogError extends TroupeError {}

/** A world path or value that cannot be used, or a write to a path an update holds. */
export class WorldError extends TroupeError {}

/** A scene asked to do something its state does not allow (step after stop, add a duplicate). */
export class SceneError extends TroupeError {
  constructor(message: string) {
    super('scene_state', message);
  }
}

/**
 * The message of anything thrown: an Error's message, else the value as text. Never throws, even
 * for a value whose `toString` does.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return '(a thrown value that cannot be printed)';
  }
}

/** The package a failed import could not find (Node's ERR_MODULE_NOT_FOUND for a bare name), if that is why it failed. */
export function missingPackage(error: unknown): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return /Cannot find package '([^']+)'/.exec(errorMessage(error))?.[1];
}
