// @ts-check
/**
 * Log mode's scrubber: a range over the log's events. Moving it asks the page to show the scene
 * as it was after the first N events; at the right end it follows the log as it grows.
 */
import { duration } from './format.js';

/**
 * @param {{ root: HTMLElement, range: HTMLInputElement, label: HTMLElement, toStart: HTMLButtonElement, toEnd: HTMLButtonElement }} parts
 * @param {{ onSeek: (position: number, following: boolean) => void }} options
 */
export function createScrubber(parts, options) {
  const { root, range, label, toStart, toEnd } = parts;
  root.hidden = false;
  range.addEventListener('input', () => {
    const position = Number(range.value);
    options.onSeek(position, position === Number(range.max));
  });
  toStart.addEventListener('click', () => options.onSeek(0, false));
  toEnd.addEventListener('click', () => options.onSeek(Number(range.max), true));

  return {
    /**
     * @param {number} position events shown
     * @param {number} total events in the log so far
     * @param {{ tick: number, at?: number, firstAt?: number }} when
     */
    update(position, total, when) {
      range.max = String(total);
      // Leave the thumb alone while it is being dragged: the browser owns it then.
      if (document.activeElement !== range || Number(range.value) !== position) range.value = String(position);
      const offset = when.at !== undefined && when.firstAt !== undefined ? ` · +${duration(when.at - when.firstAt)}` : '';
      label.textContent = `event ${position.toLocaleString('en')} of ${total.toLocaleString('en')} · tick ${when.tick}${offset}`;
      toEnd.disabled = position === total;
      toStart.disabled = position === 0;
    },
  };
}
