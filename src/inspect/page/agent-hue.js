// @ts-check
/** A stable colour per agent: the same name gets the same hue class on every card, line and row. */

const HUES = 12;

/**
 * The `hue-N` class for a name (FNV-1a over its characters).
 *
 * @param {string} name
 */
export function hueClass(name) {
  let hash = 0x811c9dc5;
  for (let index = 0; index < name.length; index++) {
    hash ^= name.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return `hue-${(hash >>> 0) % HUES}`;
}
