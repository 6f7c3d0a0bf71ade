/**
 * Small matchers the block finder runs inside regions where only one kind of tag matters: the
 * closer of a think or OBSERVATION section, the end of fenced code (and a complete `<ACTION>`
 * example inside it), and the closer of the block itself. Each reads a string from a position to
 * its end, keeps O(1) state between calls, and jumps over text that cannot matter, so it works
 * across chunk boundaries unchanged and costs next to nothing on plain text.
 */
import { LF_LT_STOPS, LF_STOPS, LT_STOPS, stopChars, type StopChars } from './stop-chars.js';
import { isXmlSpace } from './xml-chars.js';

const LF = 0x0a;
const SPACE = 0x20;
const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const RBRACKET = 0x5d;

function lowerAscii(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

/** Watches for `</name>` (any letter case, whitespace allowed before `>`). */
export class CloseTagWatcher {
  private closer = '';
  /** 0: before `<`; k: `<` and k - 1 characters of the closer matched. */
  private index = 0;
  private space = false;

  /** Starts watching for the closer of `name` (lower-case). */
  reset(name: string): void {
    this.closer = `/${name}`;
    this.index = 0;
    this.space = false;
  }

  /** The characters that can change the state now; undefined when any can. */
  stops(): StopChars | undefined {
    return this.index === 0 ? LT_STOPS : undefined;
  }

  /** Reads `text` from `from` to its end; the index just after the closer's `>`, or -1 when it has not come yet. */
  scan(text: string, from: number): number {
    const length = text.length;
    let index = from;
    while (index < length) {
      if (this.index === 0) {
        const lt = text.indexOf('<', index);
        if (lt < 0) return -1;
        this.index = 1;
        index = lt + 1;
        continue;
      }
      const code = text.charCodeAt(index++);
      if (this.space) {
        if (isXmlSpace(code)) continue;
        if (code === GT) return index;
      } else if (lowerAscii(code) === this.closer.charCodeAt(this.index - 1)) {
        this.index++;
        if (this.index > this.closer.length) this.space = true;
        continue;
      }
      // The closer's only `<` is its first character, so a mismatch can restart only at a `<`.
      this.space = false;
      this.index = code === LT ? 1 : 0;
    }
    return -1;
  }
}

const OPEN_LINE = 0;
const LINE_START = 1;
const CLOSE_RUN = 2;
const CLOSE_TAIL = 3;
const CONTENT = 4;

/** `<action` then whitespace, `>` or `/`; later `</action` then optional whitespace and `>`. */
const EXAMPLE_OPEN = 'action';
const EXAMPLE_CLOSE = '/action';

/**
 * Watches the inside of fenced code for its closing fence (a run of the fence character at least
 * as long, up to three spaces of indent, only whitespace after), and for a complete
 * `<ACTION>…</ACTION>` written inside it.
 */
export class FencedCodeWatcher {
  /** True once some fence held a complete `<ACTION>` block. */
  exampleSeen = false;
  private char = 0;
  private length = 0;
  private line = OPEN_LINE;
  private indent = 0;
  private run = 0;
  // The example tag being read after `<`: characters matched of the opener or closer name.
  private exampleMatched = 0;
  private exampleMatching = false;
  private exampleSpace = false;
  private exampleOpen = false;

  /** Starts a fence; `openLine` when the rest of the opening line (its info string) is still to come. */
  open(char: number, length: number, openLine: boolean): void {
    this.char = char;
    this.length = length;
    this.line = openLine ? OPEN_LINE : LINE_START;
    this.indent = 0;
    this.exampleMatching = false;
    this.exampleOpen = false;
  }

  /** The characters that can change the state now; undefined when any can. */
  stops(): StopChars | undefined {
    if (this.line === OPEN_LINE) return LF_STOPS;
    return this.line === CONTENT && !this.exampleMatching ? LF_LT_STOPS : undefined;
  }

  /** Reads `text` from `from` to its end; the index just after the newline ending the closing fence line, or -1. */
  scan(text: string, from: number): number {
    const length = text.length;
    let index = from;
    while (index < length) {
      if (this.line === OPEN_LINE) {
        const lf = text.indexOf('\n', index);
        if (lf < 0) return -1;
        this.line = LINE_START;
        index = lf + 1;
        continue;
      }
      let code = text.charCodeAt(index);
      if (this.line === CONTENT && !this.exampleMatching) {
        // Inside a content line only its end and a `<` can matter.
        while (code !== LF && code !== LT) {
          if (++index === length) return -1;
          code = text.charCodeAt(index);
        }
      }
      index++;
      if (this.feed(code)) return index;
    }
    return -1;
  }

  /** Reads one character of the fence's content; true when it was the newline ending the closing fence line. */
  private feed(code: number): boolean {
    this.watchExample(code);
    switch (this.line) {
      case LINE_START:
        if (code === SPACE && this.indent < 3) this.indent++;
        else if (code === this.char) {
          this.line = CLOSE_RUN;
          this.run = 1;
        } else if (code === LF) this.indent = 0;
        else this.line = CONTENT;
        return false;
      case CLOSE_RUN:
        if (code === this.char) this.run++;
        else if (this.run >= this.length && code === LF) return true;
        else if (this.run >= this.length && isXmlSpace(code)) this.line = CLOSE_TAIL;
        else this.content(code);
        return false;
      case CLOSE_TAIL:
        if (code === LF) return true;
        if (!isXmlSpace(code)) this.line = CONTENT;
        return false;
      default:
        this.content(code);
        return false;
    }
  }

  private content(code: number): void {
    if (code === LF) {
      this.line = LINE_START;
      this.indent = 0;
    } else {
      this.line = CONTENT;
    }
  }

  /** `<action` followed by whitespace, `>` or `/`, then later `</action>`. */
  private watchExample(code: number): void {
    if (this.exampleMatching) {
      const target = this.exampleOpen ? EXAMPLE_CLOSE : EXAMPLE_OPEN;
      if (this.exampleSpace) {
        if (isXmlSpace(code)) return;
        if (code === GT) this.exampleSeen = true;
      } else if (this.exampleMatched === target.length) {
        if (!this.exampleOpen && (isXmlSpace(code) || code === GT || code === SLASH)) this.exampleOpen = true;
        else if (this.exampleOpen && code === GT) this.exampleSeen = true;
        else if (this.exampleOpen && isXmlSpace(code)) {
          this.exampleSpace = true;
          return;
        }
      } else if (lowerAscii(code) === target.charCodeAt(this.exampleMatched)) {
        this.exampleMatched++;
        return;
      }
      this.exampleMatching = false;
    }
    if (code === LT) {
      this.exampleMatching = true;
      this.exampleMatched = 0;
      this.exampleSpace = false;
    }
  }
}

// What the text after a `<` inside the block may still become.
const AFTER_LT = 0;
const CDATA_OPEN = 1;
const CLOSER = 2;
const OPENER = 3;
const CDATA_TEXT = '![CDATA[';
const CLOSER_TEXT = '/action';
const OPENER_TEXT = 'action';
/** Inside CDATA with no `]` pending, only a `]` can start its end. */
const CDATA_STOPS = stopChars(']');

/**
 * Watches the inside of the block for its closer `</ACTION>` outside CDATA sections (rule 3),
 * noting the first nested `<ACTION` opener on the way (rule 4).
 */
export class BlockWatcher {
  /** Position of the closer's `<` once `scan` found the closer. */
  closerStart = -1;
  /** Position of the first nested opener's `<`, or -1. */
  nestedAt = -1;
  /** Output position of the `<` being read, or -1. */
  private lt = -1;
  private target = AFTER_LT;
  /** Characters of the target matched after the `<`. */
  private matched = 0;
  private closeSpace = false;
  private inCdata = false;
  private brackets = 0;

  /** The characters that can change the state now; undefined when any can. */
  stops(): StopChars | undefined {
    if (this.inCdata) return this.brackets === 0 ? CDATA_STOPS : undefined;
    return this.lt < 0 ? LT_STOPS : undefined;
  }

  /**
   * Reads `text` from `from` to its end, where `text[0]` is at output position `base`; the index
   * just after the closer's `>`, or -1 when it has not come yet.
   */
  scan(text: string, from: number, base: number): number {
    const length = text.length;
    let index = from;
    while (index < length) {
      if (this.inCdata) {
        let brackets = this.brackets;
        while (index < length) {
          const code = text.charCodeAt(index++);
          if (code === RBRACKET) brackets++;
          else if (code === GT && brackets >= 2) {
            this.inCdata = false;
            break;
          } else brackets = 0;
        }
        this.brackets = brackets;
        continue;
      }
      if (this.lt < 0) {
        const lt = text.indexOf('<', index);
        if (lt < 0) return -1;
        this.startTag(base + lt);
        index = this.matchName(text, lt + 1);
        continue;
      }
      const code = text.charCodeAt(index);
      if (this.step(code)) {
        this.closerStart = this.lt;
        return index + 1;
      }
      // Not a tag that matters here: the character is plain block text, or the `<` of a new tag.
      if (this.lt < 0 && code === LT) this.startTag(base + index);
      index++;
    }
    return -1;
  }

  /**
   * Reads the name after a `<` as far as `text` holds it, in one loop: the same steps as `step`,
   * without a call per character. Returns where `scan` goes on; clears `lt` when the tag cannot
   * matter (most tags in a block are calls and arguments).
   */
  private matchName(text: string, from: number): number {
    if (from >= text.length) return from;
    const first = text.charCodeAt(from);
    if (first === BANG) this.target = CDATA_OPEN;
    else if (first === SLASH) this.target = CLOSER;
    else if ((first | 0x20) === 0x61 /* a */) this.target = OPENER;
    else {
      // The character is read again as block text (it may be the `<` of the next tag).
      this.lt = -1;
      return from;
    }
    const name = this.target === CDATA_OPEN ? CDATA_TEXT : this.target === CLOSER ? CLOSER_TEXT : OPENER_TEXT;
    const exact = this.target === CDATA_OPEN;
    let index = from + 1;
    let matched = 1;
    while (matched < name.length && index < text.length) {
      const code = text.charCodeAt(index);
      if ((exact ? code : lowerAscii(code)) !== name.charCodeAt(matched)) {
        this.lt = -1;
        return index;
      }
      matched++;
      index++;
    }
    this.matched = matched;
    if (matched === name.length) {
      if (this.target === CDATA_OPEN) {
        this.inCdata = true;
        this.brackets = 0;
        this.lt = -1;
      } else if (this.target === CLOSER) {
        this.closeSpace = true;
      }
    }
    return index;
  }

  private startTag(position: number): void {
    this.lt = position;
    this.target = AFTER_LT;
    this.matched = 0;
    this.closeSpace = false;
  }

  /** Reads one character after a `<`: true when it completed the closer; clears `lt` when the tag no longer matters. */
  private step(code: number): boolean {
    switch (this.target) {
      case AFTER_LT: {
        const lower = lowerAscii(code);
        if (code === BANG) this.target = CDATA_OPEN;
        else if (lower === SLASH) this.target = CLOSER;
        else if (lower === 0x61 /* a */) this.target = OPENER;
        else break;
        this.matched = 1;
        return false;
      }
      case CDATA_OPEN:
        if (code !== CDATA_TEXT.charCodeAt(this.matched)) break;
        if (++this.matched === CDATA_TEXT.length) {
          this.inCdata = true;
          this.brackets = 0;
          this.lt = -1;
        }
        return false;
      case CLOSER:
        if (this.closeSpace) {
          if (isXmlSpace(code)) return false;
          if (code === GT) return true;
          break;
        }
        if (lowerAscii(code) !== CLOSER_TEXT.charCodeAt(this.matched)) break;
        if (++this.matched === CLOSER_TEXT.length) this.closeSpace = true;
        return false;
      default:
        if (this.matched === OPENER_TEXT.length) {
          if ((isXmlSpace(code) || code === GT || code === SLASH) && this.nestedAt < 0) this.nestedAt = this.lt;
          break;
        }
        if (lowerAscii(code) !== OPENER_TEXT.charCodeAt(this.matched)) break;
        this.matched++;
        return false;
    }
    this.lt = -1;
    return false;
  }
}
