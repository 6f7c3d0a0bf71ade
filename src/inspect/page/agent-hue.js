// @ts-check
/**
 * A stable colour per agent: the same name gets the same hue class on every card, line and row.
 * Hues are handed out in the order names are first seen (agents join first, so in join order):
 * a scene's first twelve agents never share a colour, which a hash of the name could not promise.
 */

const HUES = 12;

/** @type {Map<string, string>} */
const given = new Map();

/**
 * The `hue-N` class for a name. Kept for the life of the page, so scrubbing a log back and forth
 * or reconnecting never recolours anyone.
 *
 * @param {string} name
 */
export function hueClass(name) {
  let hue = given.get(name);
  if (hue === undefined) {
    hue = `hue-${given.size % HUES}`;
    given.set(name, hue);
  }
  return hue;
}
