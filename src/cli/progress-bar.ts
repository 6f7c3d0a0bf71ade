/** Where a run is: ticks finished of the total (the tick in progress is not counted), and turns taken so far. */
export type Progress = { tick: number; total: number; turns: number };

/** A one-line progress bar redrawn in place on a terminal. */
export type ProgressBar = {
  /** Redraws, unless the last draw was less than the redraw interval ago. */
  update(progress: Progress): void;
  /** Erases the bar (before other output is written to the same terminal, and at the end). */
  clear(): void;
  /** Draws the last progress again, at once, after `clear` made room for other output. */
  redraw(): void;
};

/** Where the bar is drawn, and how often. */
export type ProgressBarOptions = {
  stream: NodeJS.WritableStream;
  /** Epoch milliseconds (injected by tests). */
  now?: () => number;
  /** Least time between two draws (default 100 ms: at most ~10 redraws a second). */
  intervalMs?: number;
};

const BAR_WIDTH = 20;
/** Carriage return, then erase the whole line: the cursor stays where the bar began. */
const ERASE = '\r\x1b[2K';

/**
 * A hand-written progress bar: ticks done/total, turns per second and elapsed time. Redraws are
 * throttled by time, not by event count, so a run of a million cheap turns costs a few hundred
 * writes. A dozen lines did not justify a dependency.
 */
export function createProgressBar(options: ProgressBarOptions): ProgressBar {
  const { stream } = options;
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 100;
  const startedAt = now();
  let drawnAt = Number.NEGATIVE_INFINITY;
  let visible = false;
  let last: Progress | undefined;
  const draw = (progress: Progress, at: number): void => {
    // A pseudo-terminal without a size (script, some CI runners) reports 0 columns.
    const columns = (stream as { columns?: number }).columns || 80;
    stream.write(`${ERASE}${renderProgress(progress, at - startedAt, columns)}`);
    visible = true;
  };
  return {
    update(progress) {
      last = progress;
      const at = now();
      if (at - drawnAt < intervalMs) return;
      drawnAt = at;
      draw(progress, at);
    },
    clear() {
      if (!visible) return;
      stream.write(ERASE);
      visible = false;
    },
    redraw() {
      if (!visible && last !== undefined) draw(last, now());
    },
  };
}

/**
 * The text of the bar, cut to the terminal's width.
 *
 * @example
 * renderProgress({ tick: 50, total: 200, turns: 1234 }, 2_000, 80);
 * // '[█████               ]  50/200 ticks · 1234 turns · 617.0 turns/s · 2.0 s'
 */
export function renderProgress(progress: Progress, elapsedMs: number, columns: number): string {
  const { tick, total, turns } = progress;
  const share = total > 0 ? Math.min(1, tick / total) : 0;
  const filled = Math.round(share * BAR_WIDTH);
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? (turns / seconds).toFixed(1) : '–';
  const done = String(tick).padStart(String(total).length);
  const line = `[${'█'.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${done}/${total} ticks · ${turns} turns · ${rate} turns/s · ${seconds.toFixed(1)} s`;
  // Writing past the last column would wrap, and `\r` would then erase only the second line.
  return line.length < columns ? line : line.slice(0, Math.max(0, columns - 1));
}
