import type { Envelope } from '../bus/events.js';
import { safeJson } from '../bus/serialize-event.js';
import { formatBytes, isToolResult } from '../tools/result-parts.js';
import { plain, type Styler } from './style.js';
import { terminalSafe as safe } from './terminal-text.js';

/** Longest argument list or tool output shown on a transcript line; the log has the rest. */
const BRIEF_CHARS = 100;
/** Up to this many agents, every tick gets a header, even an empty one (the pace is readable). */
const EVERY_TICK_UP_TO = 4;

/**
 * The transcript line(s) for one bus event: who said what, which tools ran, the corrections the
 * runtime made, budgets and world changes. Events a reader does not need (state changes, model
 * requests, parsed calls) give no line. Pure: the same envelope always gives the same lines.
 * Control and bidi characters in what models, tools and scenes wrote are shown as code points
 * (`<U+202E>`): only the styler's own colours reach the terminal as sequences.
 *
 * @example
 * formatEvent({ id: 'e-1', type: 'agent.said', at: 0, agent: 'innkeeper', data: { text: 'Ale?', to: 'guard' } });
 * // ['innkeeper → guard: "Ale?"']
 */
export function formatEvent(event: Envelope, styler: Styler = plain): string[] {
  const style: Styler = (look, text) => styler(look, safe(text));
  const who = style('name', event.agent ?? event.scene ?? 'troupe');
  const scene = event.scene === undefined ? 'scene' : `scene ${event.scene}`;
  switch (event.type) {
    case 'scene.started': {
      const { seed, agents } = event.data;
      const cast = agents.length <= 8 ? `: ${agents.join(', ')}` : '';
      return [`${style('scene', `▶ ${scene} started`)}${style('dim', ` · seed ${seed} · ${count(agents.length, 'agent')}${cast}`)}`];
    }
    case 'scene.tick':
      return [style('dim', `── tick ${event.data.tick} ──`)];
    case 'scene.stopped': {
      const detail = event.data.detail === undefined ? '' : ` (${event.data.detail})`;
      return [style('scene', `■ ${scene} stopped at tick ${event.data.tick}: ${event.data.reason}${detail}`)];
    }
    case 'agent.said': {
      const to = event.data.to === undefined ? '' : ` → ${style('name', event.data.to)}`;
      return [`${who}${to}: ${style('speech', quoted(event.data.text))}`];
    }
    case 'tool.completed':
      // The built-in `say` tool already shows as the speech it published.
      if (event.data.name === 'say') return [];
      return [`  ${style('ok', '⚙')} ${who} ${style('tool', call(event.data.name, event.data.args))} → ${safe(briefOutput(event.data.output))}`];
    case 'tool.failed': {
      const { kind, message } = event.data.error;
      const attempt = event.data.attempt > 1 ? `, attempt ${event.data.attempt}` : '';
      return [`  ${style('error', '✗')} ${who} ${style('tool', call(event.data.name, event.data.args))} ${style('error', `failed (${kind}${attempt}): ${message}`)}`];
    }
    case 'tool.rejected': {
      // A denial is already on the approval's line (`✗ denied …`): the model did nothing wrong.
      if (event.data.code === 'denied') return [];
      const { name, message, suggestion } = event.data;
      const hint = suggestion !== undefined && !message.includes(suggestion) ? ` (did you mean ${suggestion}?)` : '';
      return [`  ${style('warn', '⚠ correction')} ${who} ${style('tool', name)}: ${safe(message + hint)}`];
    }
    case 'action.malformed':
      return [`  ${style('warn', '⚠ correction')} ${who} ${safe(`malformed <ACTION> (${event.data.code}): ${event.data.message}`)}`];
    case 'tool.approval.requested':
      return [`  ${style('warn', '?')} ${who} ${style('tool', call(event.data.name, event.data.args))} waits for approval`];
    case 'tool.approval.resolved':
      return [`  ${style(event.data.approved ? 'ok' : 'warn', event.data.approved ? '✓ approved' : '✗ denied')} ${style('tool', event.data.name)}${because(event.data.reason)}`];
    case 'tool.result.approval.requested':
      return [`  ${style('warn', '?')} ${who} ${style('tool', event.data.name)} result waits for approval: ${safe(brief(event.data.output))}`];
    case 'tool.result.approval.resolved':
      return [`  ${style(event.data.approved ? 'ok' : 'warn', event.data.approved ? '✓ result approved' : '✗ result rejected')} ${style('tool', event.data.name)}${because(event.data.reason)}`];
    case 'tool.repaired': {
      const { before, after, by } = event.data;
      return [`  ${style('warn', '⚒ repaired')} ${who} ${style('tool', call(before.name, before.args))} → ${style('tool', call(after.name, after.args))} (by ${safe(by)})`];
    }
    case 'llm.error':
      return [`  ${style('error', '!')} ${who} ${safe(`model error (${event.data.kind}, attempt ${event.data.attempt}): ${event.data.message}`)}`];
    case 'budget.exhausted':
      return [`  ${style('error', '⛔')} ${style('error', event.data.message)}`];
    case 'world.changed':
      return [`  ${style('world', '◆')} ${style('dim', 'world')} ${safe(`${event.data.path} = ${event.data.value === undefined ? '(removed)' : brief(event.data.value)}`)}`];
    case 'scene.event': {
      const payload = event.data.payload === undefined ? '' : ` ${brief(event.data.payload)}`;
      return [`  ${style('world', '✦')} ${event.agent === undefined ? '' : `${who} `}${safe(`event ${event.data.name}${payload}`)}`];
    }
    case 'agent.finished':
      // A scene ends many turns per tick; only the ones that went wrong are worth a line.
      if (event.data.reason !== 'error') return [];
      return [`  ${style('error', '✗')} ${who} ${safe(`stopped with an error${event.data.error === undefined ? '' : `: ${event.data.error}`}`)}`];
    case 'bus.error':
      return [`  ${style('error', '!')} ${safe(`a subscriber of ${event.data.eventType} threw: ${event.data.message}`)}`];
    case 'log.error':
      return [`  ${style('error', '!')} ${safe(`session log: ${event.data.message}`)}`];
    default:
      return [];
  }
}

/** Turns events into transcript lines, holding back a tick's header until the tick shows something. */
export type Transcript = { lines(event: Envelope): string[] };

/**
 * A transcript with tick headers: with a few agents every tick is shown (the pace is part of the
 * story); with more, a header only precedes a tick in which something worth a line happened.
 */
export function createTranscript(options: { style?: Styler; everyTickUpTo?: number } = {}): Transcript {
  const style = options.style ?? plain;
  const everyTickUpTo = options.everyTickUpTo ?? EVERY_TICK_UP_TO;
  let everyTick = true;
  let heldHeader: string[] = [];
  return {
    lines(event) {
      if (event.type === 'scene.started') everyTick = event.data.agents.length <= everyTickUpTo;
      const lines = formatEvent(event, style);
      if (event.type === 'scene.tick' && !everyTick) {
        heldHeader = lines;
        return [];
      }
      if (lines.length === 0 || heldHeader.length === 0) return lines;
      const withHeader = [...heldHeader, ...lines];
      heldHeader = [];
      return withHeader;
    },
  };
}

/** A decision's reason after a colon; the bare word the gate records for an approval says nothing more. */
function because(reason: string | undefined): string {
  return reason === undefined || reason === 'approved' ? '' : `: ${safe(reason)}`;
}

function count(value: number, noun: string): string {
  return `${value} ${noun}${value === 1 ? '' : 's'}`;
}

/** Speech in quotes; further lines indented under the speaker. */
function quoted(text: string): string {
  return `"${text.replace(/\r?\n/g, '\n    ')}"`;
}

function call(name: string, args: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(args).map(([key, value]) => `${key}: ${brief(value)}`);
  return `${name}(${clip(parts.join(', '))})`;
}

/** A rich result reads as its parts, each image as a placeholder; any other output as brief JSON. */
function briefOutput(output: unknown): string {
  if (!isToolResult(output)) return brief(output);
  const parts = output.parts.map((part) => {
    if (part.type === 'image') return `[image: ${part.mediaType}, ${formatBytes(part.data.byteLength)}]`;
    return brief(part.type === 'text' ? part.text : part.value);
  });
  return clip(parts.join(' + '));
}

function brief(value: unknown): string {
  return clip(safeJson(value, { maxChars: BRIEF_CHARS * 4 }).text.replace(/\s+/g, ' '));
}

function clip(text: string): string {
  return text.length > BRIEF_CHARS ? `${text.slice(0, BRIEF_CHARS - 1)}…` : text;
}
