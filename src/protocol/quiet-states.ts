/**
 * What a streaming scanner does with a one-character ASCII chunk that cannot change its state: a
 * small table-driven automaton run by `StreamingScanner.push` instead of the machine. Between
 * pushes the scanner waits for a few characters (`stop-chars.ts`); any other character only moves
 * it past, and, before the block, is visible text. A quiet state answers, for each ASCII code, the
 * progress `push` returns (or undefined: the character needs the machine) and the shift after it.
 *
 * The answers are shared, frozen objects, so such a push allocates nothing: the hidden states
 * answer `{ visible: '', closed }`; the visible states answer the character itself. The trimmer
 * (`VisibleText`) is followed in the state: a space after visible text is held back (the answer
 * is '' and the shift remembers it), and the next visible character is answered with the
 * space before it (a shared two-character string); any other whitespace, a second space or a
 * character before any visible text takes the machine's path. A chunk of several characters (a
 * token's worth) with no loud character is answered the same way (`kind`, `loud`): in a hidden
 * state with the shared answer, in a visible state with the chunk itself, less a trailing space
 * the trimmer would hold and plus a held space before it. The scanner brings its own fields
 * (position, emitted position, held space) up to date from the quiet state when it next runs the
 * machine, so the machine never sees that it was skipped.
 */
import type { StopChars } from './stop-chars.js';

/** What one `push` produced: the next piece of the visible response, and whether the block has closed. */
export type ScanProgress = { visible: string; closed: boolean };

/**
 * The quiet path's state, with `StreamingScanner.quietShift` (0, or `AFTER_SPACE` when the
 * trimmer holds one space back): see the module comment.
 */
export type QuietState = {
  /**
   * For each ASCII code plus the shift, what `push` returns for that one-character chunk;
   * undefined when the machine must read it.
   */
  readonly answers: readonly (ScanProgress | undefined)[];
  /**
   * For each ASCII code, the shift after that quiet character. A table rather than a test for a
   * space: in prose a space is an unpredictable branch, and its mispredictions cost the one-character
   * path about 0.5 ns a character (measured).
   */
  readonly shifts: Uint8Array;
  /** True when the characters are visible text, read by the trimmer. */
  readonly visible: boolean;
  /** What the quiet path does with a chunk of several characters: `QUIET_NONE`, `QUIET_HIDDEN` or `QUIET_VISIBLE`. */
  readonly kind: number;
  /**
   * For each ASCII code, 1 when a chunk holding it must go to the machine: the stop characters,
   * and in a visible state the codes below U+0020 too, whose trimming the quiet path does not follow.
   */
  readonly loud: Uint8Array;
  /** In a hidden state, the answer to every quiet chunk. */
  readonly hiddenAnswer: ScanProgress;
};

/** Quiet kinds: every chunk of several characters goes to the machine. */
export const QUIET_NONE = 0;
/** Quiet kinds: a chunk without a loud character is hidden (inside a block, a comment, fenced code…). */
export const QUIET_HIDDEN = 1;
/** Quiet kinds: a chunk without a loud character is visible text (prose before the block). */
export const QUIET_VISIBLE = 2;

const ASCII = 0x80;
const SPACE = 0x20;
/** The shift of the answers after a held space. */
export const AFTER_SPACE = ASCII;

function progress(visible: string, closed: boolean): ScanProgress {
  return Object.freeze({ visible, closed });
}

const HIDDEN_OPEN = progress('', false);
const HIDDEN_CLOSED = progress('', true);

/** After a space in a visible state the trimmer holds it; after anything else, nothing. */
const NO_SHIFTS = new Uint8Array(ASCII);
const SPACE_SHIFTS = new Uint8Array(ASCII);
SPACE_SHIFTS[SPACE] = AFTER_SPACE;

const ALL_LOUD = new Uint8Array(ASCII).fill(1);

function state(
  kind: number,
  loud: Uint8Array,
  hiddenAnswer: ScanProgress,
  answer: (code: number, afterSpace: boolean) => ScanProgress | undefined,
): QuietState {
  const answers: (ScanProgress | undefined)[] = [];
  for (let code = 0; code < ASCII; code++) answers.push(answer(code, false));
  for (let code = 0; code < ASCII; code++) answers.push(answer(code, true));
  const visible = kind === QUIET_VISIBLE;
  return { answers, shifts: visible ? SPACE_SHIFTS : NO_SHIFTS, visible, kind, loud, hiddenAnswer };
}

/** No character is quiet: every chunk runs the machine. */
export const LOUD: QuietState = state(QUIET_NONE, ALL_LOUD, HIDDEN_OPEN, () => undefined);

/** The quiet states for one set of stop characters. */
export type QuietStates = { hidden: QuietState; hiddenClosed: QuietState; visible: QuietState };

const built = new Map<StopChars, QuietStates>();

/** The quiet states of a set of stop characters, built once per set (the sets are module constants). */
export function quietStates(stops: StopChars): QuietStates {
  let states = built.get(stops);
  if (states === undefined) {
    states = build(stops);
    built.set(stops, states);
  }
  return states;
}

function build(stops: StopChars): QuietStates {
  const chars: ScanProgress[] = [];
  const afterSpace: ScanProgress[] = [];
  for (let code = 0; code < ASCII; code++) {
    chars.push(progress(String.fromCharCode(code), false));
    afterSpace.push(progress(` ${String.fromCharCode(code)}`, false));
  }
  const quiet = (code: number): boolean => stops[code] !== 1;
  const visibleLoud = new Uint8Array(ASCII);
  for (let code = 0; code < ASCII; code++) visibleLoud[code] = quiet(code) && code >= SPACE ? 0 : 1;
  return {
    hidden: state(QUIET_HIDDEN, stops, HIDDEN_OPEN, (code) => (quiet(code) ? HIDDEN_OPEN : undefined)),
    hiddenClosed: state(QUIET_HIDDEN, stops, HIDDEN_CLOSED, (code) => (quiet(code) ? HIDDEN_CLOSED : undefined)),
    // ASCII whitespace is at most U+0020; only a single space is followed here (see the module comment).
    visible: state(QUIET_VISIBLE, visibleLoud, HIDDEN_OPEN, (code, held) => {
      if (!quiet(code) || code < SPACE) return undefined;
      if (code === SPACE) return held ? undefined : HIDDEN_OPEN;
      return held ? afterSpace[code] : chars[code];
    }),
  };
}
