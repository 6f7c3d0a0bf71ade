/**
 * Writes `<ACTION>` text the way a model writes it. Brains could spell it out by hand (the clumsy
 * patron does, to get it wrong); these keep the correct calls short and escape what XML needs.
 */

/** Values go in as text; `&` and `<` are escaped so a line of speech can never break the block. */
function escapeText(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;');
}

/** One call: `<name><param>value</param>…</name>`. Objects are written as JSON literals. */
export function call(name: string, args: Record<string, string | number | boolean | object> = {}): string {
  let inner = '';
  for (const [key, value] of Object.entries(args)) {
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    inner += `<${key}>${escapeText(text)}</${key}>`;
  }
  return `<${name}>${inner}</${name}>`;
}

/** The block around one or more calls, optionally after a line of visible text (heard as speech). */
export function action(calls: string | readonly string[], text?: string): string {
  const block = `<ACTION>${typeof calls === 'string' ? calls : calls.join('')}</ACTION>`;
  return text === undefined ? block : `${text}\n${block}`;
}
