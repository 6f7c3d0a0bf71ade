// @ts-check
/**
 * DOM helpers for the inspector page. Everything a model, a tool or a log wrote reaches the page
 * through `textContent` (here and nowhere else), so no markup, script or image from data ever
 * becomes live: the CSP forbids inline script anyway, and this keeps even harmless-looking HTML inert.
 */

/**
 * @typedef {{ class?: string, text?: string, title?: string, attrs?: Record<string, string>, on?: Record<string, (event: Event) => void> }} ElementOptions
 */

/**
 * A new element with a class, text (as text, never as markup), attributes and listeners.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {ElementOptions} [options]
 * @param {(Node | string | null | undefined | false)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.class !== undefined) node.className = options.class;
  if (options.text !== undefined) node.textContent = options.text;
  if (options.title !== undefined) node.title = options.title;
  if (options.attrs !== undefined) for (const [name, value] of Object.entries(options.attrs)) node.setAttribute(name, value);
  if (options.on !== undefined) for (const [name, listener] of Object.entries(options.on)) node.addEventListener(name, listener);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return node;
}

/**
 * Removes every child of `node`.
 *
 * @param {Element} node
 */
export function clear(node) {
  node.replaceChildren();
}

// Bidi overrides and isolates reorder what a reader sees (Trojan Source); zero-width and other
// control characters hide text. They are shown as visible marks instead.
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const HAS_INVISIBLE = new RegExp(INVISIBLE.source);

/**
 * Text as a fragment in which control and bidi characters show as marks (`U+202E`) rather than
 * acting on the text around them. Newlines and tabs stay as they are.
 *
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function visibleText(text) {
  const fragment = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(INVISIBLE)) {
    const index = match.index ?? 0;
    if (index > last) fragment.append(text.slice(last, index));
    const code = match[0].codePointAt(0) ?? 0;
    const mark = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
    fragment.append(el('span', { class: 'control-char', text: mark, title: 'invisible control character' }));
    last = index + match[0].length;
  }
  if (last < text.length) fragment.append(text.slice(last));
  return fragment;
}

/**
 * Sets a node's content to `text` with control characters made visible.
 *
 * @param {Node} node
 * @param {string} text
 */
export function setVisibleText(node, text) {
  if (!HAS_INVISIBLE.test(text)) {
    node.textContent = text;
    return;
  }
  /** @type {Element} */ (node).replaceChildren(visibleText(text));
}

/**
 * Keeps a scrolling list pinned to its bottom while the reader is there, and leaves it alone once
 * they scroll up to read. Whether it is pinned is decided by the reader's scrolling only, never by
 * content or panel size changing under them (a panel appearing above must not unpin it).
 *
 * @param {HTMLElement} scroller
 */
export function stickToBottom(scroller) {
  let pinned = true;
  let scheduled = false;
  const nearBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
  // Scrolling needs a layout: wait until the frame's changes are all made (the microtask runs
  // after the current task), so the page lays out once per frame, not once per list.
  const toBottom = () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      if (pinned) scroller.scrollTop = scroller.scrollHeight;
    });
  };
  scroller.addEventListener('scroll', () => {
    pinned = nearBottom();
  });
  new ResizeObserver(() => pinned && toBottom()).observe(scroller);
  return {
    /** Call after changing the content. */
    after() {
      if (pinned) toBottom();
    },
    /** Scrolls to the bottom and stays there (after a rebuild). */
    pin() {
      pinned = true;
      toBottom();
    },
  };
}
