/**
 * The tag half of the block finder: after a `<` in prose, which tag is this, and the regions the
 * tags that matter open (comments, think and OBSERVATION sections, the block itself). A tag is
 * read tentatively and, when it turns out to be none of these, read again as prose once (see
 * `tagFail`). The matchers that watch for each region's end live in `tag-watchers.ts`. Its state
 * is declared here and given first values in `StreamingScanner`.
 */
import { CodeReader } from './code-reader.js';
import * as modes from './scan-modes.js';
import { BlockWatcher, CloseTagWatcher } from './tag-watchers.js';
import { isNameStartChar, isXmlSpace } from './xml-chars.js';

// Local copies (see `scan-modes.ts`).
const { BLOCK, COMMENT, DONE, HIDER, PROSE, TAG } = modes;

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const DASH = 0x2d;
const BANG = 0x21;

// Tag phases after `<` in prose.
const TAG_NAME = 0;
const TAG_HIDER_SPACE = 1;
const TAG_ACTION_SPACE = 2;
const TAG_SLASH = 3;
const TAG_ATTRIBUTES = 4;

/**
 * The tag names that matter in prose, by first letter. `think` is a prefix of `thinking`, so the
 * letters of a tag are compared with one target name.
 */
const THINKING = 'thinking';
const THINK_LENGTH = 5;
const OBSERVATION = 'observation';
const ACTION = 'action';

/**
 * The block finder's tag, hidden-region and block state, with the readers of the `TAG`, `COMMENT`,
 * `HIDER` and `BLOCK` modes.
 */
export abstract class TagReader extends CodeReader {
  // The tag being read after `<`: the name its first letter chose, how many letters (or dashes after `!`) were read.
  protected abstract tagStart: number;
  protected abstract tagTarget: string;
  protected abstract tagLength: number;
  protected abstract tagBang: boolean;
  protected abstract tagPhase: number;
  protected abstract tagSlash: boolean;

  // Hidden regions: think sections before the block are (start, end) pairs, end -1 while open.
  protected abstract dashes: number;
  protected abstract hiderWatcher: CloseTagWatcher | undefined;
  protected abstract hiderThink: boolean;
  protected abstract thinks: number[] | undefined;

  // The block.
  protected abstract blockWatcher: BlockWatcher | undefined;
  protected abstract openerStart: number;
  protected abstract openerEnd: number;
  protected abstract openerAttributes: boolean;
  protected abstract openerSelfClosing: boolean;
  protected abstract closerStart: number;
  protected abstract closerEnd: number;
  protected abstract secondOpenerAt: number;

  /** Starts reading a tag at the `<` at `pos`. */
  protected startTag(): void {
    this.tagStart = this.pos;
    this.tagTarget = '';
    this.tagLength = 0;
    this.tagBang = false;
    this.tagPhase = TAG_NAME;
    this.mode = TAG;
    this.pos++;
  }

  /** The `TAG` mode: reads the tag after `<` until it is known or fails. */
  protected tag(): void {
    const win = this.win;
    const base = this.winStart;
    while (this.mode === TAG) {
      let index = this.pos - base;
      if (index < 0 || index >= win.length) return;
      if (this.tagPhase === TAG_NAME && !this.tagBang) {
        // The letters of the name, in one loop: each must continue the only name the tag can still be.
        for (; index < win.length; index++) {
          const code = win.charCodeAt(index);
          const lower = code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
          if (lower < 0x61 || lower > 0x7a) break;
          if (this.tagLength === 0) {
            this.tagTarget = lower === 0x74 /* t */ ? THINKING : lower === 0x6f /* o */ ? OBSERVATION : lower === 0x61 /* a */ ? ACTION : '';
            if (this.tagTarget === '') return this.tagFail();
          } else if (this.tagTarget.charCodeAt(this.tagLength) !== lower) {
            return this.tagFail();
          }
          this.tagLength++;
        }
        this.pos = base + index;
        if (index === win.length) return;
      }
      this.tagChar(win.charCodeAt(index));
    }
  }

  /** The tag name read so far when it is a whole name that matters, else ''. */
  private tagName(): string {
    const target = this.tagTarget;
    if (this.tagLength === target.length && this.tagLength > 0) return target;
    return target === THINKING && this.tagLength === THINK_LENGTH ? 'think' : '';
  }

  /** Reads the character at `pos` of a tag after `<` (other than a letter of its name). */
  private tagChar(code: number): void {
    switch (this.tagPhase) {
      case TAG_NAME: {
        if (this.tagBang) {
          if (code !== DASH) return this.tagFail();
          this.pos++;
          if (++this.tagLength === 2) {
            this.mode = COMMENT;
            this.dashes = 0;
          }
          return;
        }
        if (this.tagLength === 0 && code === BANG) {
          this.tagBang = true;
          this.pos++;
          return;
        }
        const name = this.tagName();
        if (name === '') return this.tagFail();
        const space = isXmlSpace(code);
        if (name === ACTION) {
          if (code === GT) return this.opener(false, false);
          if (code === SLASH) this.tagPhase = TAG_SLASH;
          else if (space) this.tagPhase = TAG_ACTION_SPACE;
          else return this.tagFail();
          this.pos++;
          return;
        }
        if (code === GT) return this.openHider();
        if (!space) return this.tagFail();
        this.tagPhase = TAG_HIDER_SPACE;
        this.pos++;
        return;
      }
      case TAG_HIDER_SPACE:
        if (code === GT) return this.openHider();
        if (!isXmlSpace(code)) return this.tagFail();
        this.pos++;
        return;
      case TAG_ACTION_SPACE:
        if (code === GT) return this.opener(false, false);
        if (isXmlSpace(code)) {
          this.pos++;
          return;
        }
        if (code === SLASH) {
          this.tagPhase = TAG_SLASH;
          this.pos++;
          return;
        }
        // `<ACTION id="1">`: attributes. An attribute value cannot hold `<`, so a `<` ends the attempt.
        if (!isNameStartChar(code) && !(code >= 0xd800 && code <= 0xdbff)) return this.tagFail();
        this.tagPhase = TAG_ATTRIBUTES;
        this.tagSlash = false;
        this.pos++;
        return;
      case TAG_SLASH:
        return code === GT ? this.opener(false, true) : this.tagFail();
      default:
        if (code === GT) return this.opener(true, this.tagSlash);
        if (code === LT) return this.tagFail();
        this.tagSlash = code === SLASH;
        this.pos++;
    }
  }

  /** Not a tag we know: the `<` is text, and what follows it is read again as prose. */
  protected tagFail(): void {
    // The region read since `<` holds no other `<` (a `<` ends every attempt), so a character is re-read this way at most once.
    this.pos = this.tagStart + 1;
    this.mode = PROSE;
    this.lineIndent = -1;
    this.lineBlank = false;
  }

  private opener(attributes: boolean, selfClosing: boolean): void {
    this.pos++;
    this.lineIndent = -1;
    if (this.openerStart >= 0) {
      // After the block: a second block (rule 4); nothing after it can change the outcome.
      this.secondOpenerAt = this.tagStart;
      this.mode = DONE;
      return;
    }
    this.openerStart = this.tagStart;
    this.openerEnd = this.pos;
    this.openerAttributes = attributes;
    this.openerSelfClosing = selfClosing;
    if (selfClosing) {
      this.closerStart = this.pos;
      this.closerEnd = this.pos;
      this.mode = PROSE;
    } else {
      this.mode = BLOCK;
      this.blockWatcher = new BlockWatcher();
    }
  }

  private openHider(): void {
    const name = this.tagName();
    this.pos++;
    this.mode = HIDER;
    (this.hiderWatcher ??= new CloseTagWatcher()).reset(name);
    // Reasoning is not speech: think sections before the block are cut from the visible text.
    this.hiderThink = name !== 'observation' && this.openerStart < 0;
    if (this.hiderThink) (this.thinks ??= []).push(this.tagStart, -1);
  }

  /** The `COMMENT` mode: reads up to the `-->` that ends the comment. */
  protected comment(): void {
    const win = this.win;
    const base = this.winStart;
    const length = win.length;
    let index = this.pos - base;
    let dashes = this.dashes;
    while (index < length) {
      const code = win.charCodeAt(index++);
      if (code === DASH) {
        dashes++;
      } else if (code === GT && dashes >= 2) {
        this.pos = base + index;
        this.mode = PROSE;
        this.lineIndent = -1;
        return;
      } else {
        dashes = 0;
      }
    }
    this.dashes = dashes;
    this.pos = base + length;
  }

  /** The `HIDER` mode: reads up to the closer of the think or OBSERVATION section. */
  protected hider(): void {
    const end = (this.hiderWatcher as CloseTagWatcher).scan(this.win, this.pos - this.winStart);
    if (end < 0) {
      this.pos = this.winStart + this.win.length;
      return;
    }
    this.pos = this.winStart + end;
    if (this.hiderThink) (this.thinks as number[])[(this.thinks as number[]).length - 1] = this.pos;
    this.mode = PROSE;
    this.lineIndent = -1;
  }

  // ── Inside the block ──────────────────────────────────────────────────────

  /** The `BLOCK` mode: reads up to `</ACTION>` outside CDATA. */
  protected block(): void {
    const watcher = this.blockWatcher as BlockWatcher;
    const end = watcher.scan(this.win, this.pos - this.winStart, this.winStart);
    if (end < 0) {
      this.pos = this.winStart + this.win.length;
      return;
    }
    this.pos = this.winStart + end;
    this.closerStart = watcher.closerStart;
    this.closerEnd = this.pos;
    this.mode = PROSE;
    this.lineIndent = -1;
  }
}
