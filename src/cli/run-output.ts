import type { Bus, Unsubscribe } from '../bus/bus.js';
import { serializeEnvelope } from '../bus/serialize-event.js';
import type { CliIo } from './cli-io.js';
import { createProgressBar, type ProgressBar } from './progress-bar.js';
import type { RunFlags } from './run-flags.js';
import { createStyler, isTty, wantsColour } from './style.js';
import { jsonTerminalSafe, terminalSafe } from './terminal-text.js';
import { createTranscript } from './transcript.js';

/** From this many ticks (or agents) on, a run is long enough for a progress bar. */
const LONG_RUN_TICKS = 100;
const MANY_AGENTS = 50;

/** What a run shows while it goes: JSON lines, or a transcript and a progress bar. */
export type RunOutput = {
  /** Starts showing the events of `bus`. */
  attach(bus: Bus): void;
  /** A note to stderr, above the bar; control and bidi characters in it are shown as code points. */
  note(line: string): void;
  /** Stops showing events and erases the bar. */
  finish(): void;
};

/**
 * The output of one `troupe run`. `--json`: every event as one JSON line on stdout and nothing
 * else there. Otherwise the transcript on stdout (unless `--quiet`), and, when stderr is a
 * terminal and the run is long, a progress bar on stderr.
 */
export function createRunOutput(flags: Pick<RunFlags, 'json' | 'quiet'>, totalTicks: number, io: CliIo): RunOutput {
  const { out, err } = io;
  const subscriptions: Unsubscribe[] = [];
  const wantBar = !flags.json && !flags.quiet && isTty(err);
  let bar: ProgressBar | undefined;
  // Lines written above the bar: on a shared terminal, erase it first and draw it again below.
  const above = (stream: NodeJS.WritableStream, text: string): void => {
    if (bar === undefined || (stream === out && !isTty(out))) return void stream.write(text);
    bar.clear();
    stream.write(text);
    bar.redraw();
  };
  const progress = { tick: 0, total: totalTicks, turns: 0 };
  const transcript = createTranscript({ style: createStyler(wantsColour(out, io.env)) });

  const attach = (bus: Bus): void => {
    if (flags.json) {
      // JSON escapes C0 controls itself; C1, bidi and separators it leaves raw.
      subscriptions.push(bus.on('*', (event) => void out.write(`${jsonTerminalSafe(serializeEnvelope(event).text)}\n`)));
      return;
    }
    if (!flags.quiet) {
      subscriptions.push(
        bus.on('*', (event) => {
          const lines = transcript.lines(event);
          if (lines.length > 0) above(out, `${lines.join('\n')}\n`);
        }),
      );
    }
    if (!wantBar) return;
    subscriptions.push(
      bus.on('scene.started', (event) => {
        if (totalTicks >= LONG_RUN_TICKS || event.data.agents.length >= MANY_AGENTS) bar = createProgressBar({ stream: err, now: io.now });
      }),
      // A tick is done once the next begins (or the scene stops): the bar counts finished ticks.
      bus.on('scene.tick', (event) => {
        progress.tick = event.data.tick - 1;
        bar?.update(progress);
      }),
      bus.on('scene.stopped', (event) => {
        // Stopped mid-tick (Ctrl-C) leaves that tick unfinished.
        if (event.data.reason !== 'stopped' && event.data.reason !== 'signal') progress.tick = event.data.tick;
        bar?.update(progress);
      }),
      // Every scene turn opens with `agent.triggered`: the cheapest event to count turns by.
      bus.on('agent.triggered', () => {
        progress.turns++;
        bar?.update(progress);
      }),
    );
  };

  return {
    attach,
    note(line) {
      above(err, `${terminalSafe(line)}\n`);
    },
    finish() {
      for (const unsubscribe of subscriptions.splice(0)) unsubscribe();
      bar?.clear();
      bar = undefined; // notes after the run (the inspector's) must not draw it again
    },
  };
}
