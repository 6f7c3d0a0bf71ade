import { failure, success, type Outcome } from '../outcome.js';

/**
 * Splits a command line into words the way a POSIX shell would, without running a shell: blanks
 * separate words; `'…'` keeps everything literally; `"…"` keeps everything but `\"`, `\\`, `\$`
 * and `` \` ``, which lose their backslash; outside quotes a backslash keeps the next character.
 * Nothing is expanded (`$HOME`, `*`, `~` stay as written) and operators (`|`, `&&`, `;`, `>`) are
 * refused, since no shell would be there to act on them.
 *
 * @example
 * splitCommand(`npx -y @modelcontextprotocol/server-filesystem "/srv/my notes"`);
 * // { ok: true, value: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/srv/my notes'] }
 */
export function splitCommand(text: string): Outcome<string[], string> {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === ' ' || char === '\t' || char === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end < 0) return failure(`unclosed ' in ${JSON.stringify(text)}`);
      word += text.slice(index + 1, end);
      index = end;
    } else if (char === '"') {
      let closed = false;
      for (index++; index < text.length; index++) {
        const inner = text[index]!;
        if (inner === '"') {
          closed = true;
          break;
        }
        if (inner === '\\' && index + 1 < text.length && '"\\$`'.includes(text[index + 1]!)) index++;
        word += text[index];
      }
      if (!closed) return failure(`unclosed " in ${JSON.stringify(text)}`);
    } else if (char === '\\') {
      if (index + 1 >= text.length) return failure(`a \\ ends ${JSON.stringify(text)}; it must escape a character`);
      word += text[++index];
    } else if ('|&;<>()'.includes(char)) {
      return failure(`"${char}" in ${JSON.stringify(text)}: no shell runs the command, so quote it to pass it as text`);
    } else {
      word += char;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) return failure('the command is empty');
  return success(words);
}
