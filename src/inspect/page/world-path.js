// @ts-check
/**
 * Applying `world.changed` to a snapshot without touching the snapshot: each change copies the
 * containers along its path, so older snapshots and the event data they came from stay intact
 * (the event detail view shows the data as it arrived, and log mode re-derives from scratch).
 */

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown> | unknown[]}
 */
function isContainer(value) {
  return typeof value === 'object' && value !== null;
}

/**
 * Sets an own property, even one named `__proto__`: a world key is data, never a prototype.
 *
 * @param {Record<string, unknown> | unknown[]} container
 * @param {string} key
 * @param {unknown} value
 */
function define(container, key, value) {
  Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The world with `value` at the dotted `path` (removed when `value` is undefined). Missing
 * containers along the path are created as objects.
 *
 * @param {unknown} world
 * @param {string} path
 * @param {unknown} value
 * @returns {unknown}
 */
export function withChange(world, path, value) {
  const keys = path === '' ? [] : path.split('.');
  return setAt(world, keys, 0, value);
}

/**
 * @param {unknown} node
 * @param {string[]} keys
 * @param {number} index
 * @param {unknown} value
 * @returns {unknown}
 */
function setAt(node, keys, index, value) {
  if (index === keys.length) return value === undefined ? {} : value;
  const key = /** @type {string} */ (keys[index]);
  /** @type {Record<string, unknown> | unknown[]} */
  const copy = isContainer(node) ? (Array.isArray(node) ? node.slice() : { ...node }) : {};
  if (index === keys.length - 1 && value === undefined) {
    if (Array.isArray(copy) && /^\d+$/.test(key)) copy.splice(Number(key), 1);
    else delete (/** @type {Record<string, unknown>} */ (copy))[key];
    return copy;
  }
  const child = Object.hasOwn(copy, key) ? /** @type {Record<string, unknown>} */ (copy)[key] : undefined;
  define(copy, key, setAt(child, keys, index + 1, value));
  return copy;
}
