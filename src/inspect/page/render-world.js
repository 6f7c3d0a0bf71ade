// @ts-check
/**
 * The world panel: the scene's world document as a tree, with the values that changed in the last
 * moments highlighted. Highlights come from comparing each drawn value with the one drawn before,
 * so replacing a whole record lights up only the fields that differ. Small containers sit on one
 * line; the key of a larger one folds it. Rebuilt at most a few times a second (a world can be big
 * and change on every event), and capped in size.
 */
import { el, setVisibleText } from './dom.js';
import { json } from './format.js';

/** @typedef {import('./model.js').Model} Model */

/** Containers whose JSON is at most this long are shown on one line. */
const INLINE_CHARS = 56;
/** Nodes drawn at most; a huge world ends with a note instead of freezing the page. */
const MAX_NODES = 2500;
/** Rebuild no more often than this, in ms. */
const MIN_INTERVAL = 200;
/** How long a changed value stays highlighted, in ms. */
const HIGHLIGHT_MS = 1500;

/**
 * @typedef {{
 *   folded: Set<string>,
 *   drawn: Map<string, string>,
 *   previous: Map<string, string> | undefined,
 *   changedAt: Map<string, number>,
 *   now: number,
 *   nodes: number,
 *   toggle: (path: string) => void,
 * }} TreeContext
 */

/**
 * @param {HTMLElement} container
 */
export function createWorldView(container) {
  /** Paths the reader folded, kept across rebuilds. */
  const folded = new Set();
  /** @type {Map<string, number>} path → when its drawn value last changed */
  const changedAt = new Map();
  /** @type {Map<string, string> | undefined} path → the value drawn last time (undefined: nothing to compare with) */
  let previous;
  let lastBuild = 0;
  let dirty = false;
  /** @type {Model | undefined} */
  let latest;

  const build = () => {
    if (latest === undefined) return;
    const now = performance.now();
    for (const [path, at] of changedAt) if (now - at > HIGHLIGHT_MS) changedAt.delete(path);
    /** @type {TreeContext} */
    const context = { folded, drawn: new Map(), previous, changedAt, now, nodes: 0, toggle };
    const world = latest.world;
    const isEmpty = typeof world === 'object' && world !== null && Object.keys(world).length === 0;
    const children = [isEmpty ? el('div', { class: 'empty', text: 'The world is empty.' }) : renderValue(world, '', context)];
    if (context.nodes >= MAX_NODES) children.push(el('div', { class: 'empty', text: `… more (the world has over ${MAX_NODES} nodes)` }));
    // One replace keeps the reader's scroll position (reading it first would force a layout).
    container.replaceChildren(...children);
    // Folded values are not drawn: keep what was last seen of them, so unfolding lights nothing up.
    if (previous !== undefined) for (const [path, text] of previous) if (!context.drawn.has(path) && isUnderFolded(path, folded)) context.drawn.set(path, text);
    previous = context.drawn;
    lastBuild = now;
    dirty = false;
  };

  /** @param {string} path */
  const toggle = (path) => {
    if (folded.has(path)) folded.delete(path);
    else folded.add(path);
    build();
  };

  const due = () => performance.now() - lastBuild >= MIN_INTERVAL;

  return {
    /**
     * @param {Model} model
     * @param {string[]} changedPaths
     */
    render(model, changedPaths) {
      latest = model;
      if (changedPaths.length > 0) dirty = true;
      if (dirty && due()) build();
    },
    /** A rebuild owed from an earlier frame, or to end a highlight (call every frame). */
    flush() {
      if ((dirty || changedAt.size > 0) && due()) build();
    },
    /** Whether a rebuild is still owed: changes not drawn yet, or highlights to clear. */
    owes() {
      return dirty || changedAt.size > 0;
    },
    /**
     * Draws the world afresh, with nothing highlighted (a new view, or log mode's scrubber).
     *
     * @param {Model} model
     */
    reset(model) {
      latest = model;
      previous = undefined;
      changedAt.clear();
      build();
    },
  };
}

/**
 * @param {string} path
 * @param {Set<string>} folded
 */
function isUnderFolded(path, folded) {
  for (const root of folded) if (path.startsWith(`${root}.`)) return true;
  return false;
}

/**
 * @param {unknown} value
 * @param {string} path
 * @param {TreeContext} context
 * @returns {HTMLElement}
 */
function renderValue(value, path, context) {
  const list = el('div', { class: 'w-list' });
  if (typeof value !== 'object' || value === null) {
    list.append(leaf('', path, value, context));
    return list;
  }
  for (const [key, child] of Object.entries(value)) {
    if (context.nodes++ >= MAX_NODES) break;
    const childPath = path === '' ? key : `${path}.${key}`;
    list.append(node(key, childPath, child, context));
  }
  return list;
}

/**
 * @param {string} key
 * @param {string} path
 * @param {unknown} value
 * @param {TreeContext} context
 * @returns {HTMLElement}
 */
function node(key, path, value, context) {
  const isContainer = typeof value === 'object' && value !== null;
  if (!isContainer) return leaf(key, path, value, context);
  const text = json(value);
  if (text.length <= INLINE_CHARS) return leaf(key, path, value, context, text);
  const size = Array.isArray(value) ? `[${value.length}]` : `{${Object.keys(value).length}}`;
  const isFolded = context.folded.has(path);
  const head = el('div', { class: 'w-head', attrs: { 'data-path': path } }, [
    el('button', {
      class: 'w-key w-toggle',
      text: `${isFolded ? '▸' : '▾'} ${key}`,
      attrs: { type: 'button', 'aria-expanded': String(!isFolded) },
      on: { click: () => context.toggle(path) },
    }),
    el('span', { class: 'w-size', text: size }),
  ]);
  return el('div', { class: 'w-node' }, [head, isFolded ? null : renderValue(value, path, context)]);
}

/**
 * One value on one line, highlighted when it differs from what was drawn there before.
 *
 * @param {string} key
 * @param {string} path
 * @param {unknown} value
 * @param {TreeContext} context
 * @param {string} [text] the value's JSON, when already made
 */
function leaf(key, path, value, context, text) {
  const shown = typeof value === 'string' ? JSON.stringify(value) : (text ?? json(value));
  context.drawn.set(path, shown);
  if (context.previous !== undefined && context.previous.get(path) !== shown) context.changedAt.set(path, context.now);
  const changed = context.changedAt.has(path);
  const valueNode = el('span', { class: `w-value w-${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}` });
  setVisibleText(valueNode, shown);
  return el('div', { class: `w-leaf${changed ? ' changed' : ''}`, attrs: { 'data-path': path } }, [
    key === '' ? null : el('span', { class: 'w-key', text: key }),
    valueNode,
  ]);
}
