/**
 * Nearest-name suggestions for "did you mean" messages: unknown tools, unknown parameters, enum
 * values the model misspelled.
 */

/** Names longer than this are compared by their first characters only, so hostile input stays cheap. */
const MAX_COMPARED = 64;

/**
 * The candidate a model most likely meant by `name`, or `undefined` when none is close enough.
 *
 * In order: a match ignoring case, `_` and `-` (`playerId` → `player_id`); a single candidate that
 * `name` is a prefix of, or that is a prefix of `name` (at least 3 characters either way); the
 * candidate with the smallest Damerau–Levenshtein distance, when that is at most 1 for names of up
 * to 4 characters, 2 up to 8, and 3 beyond, and less than half the name's length. So `lookup_playr`
 * suggests `lookup_player`, and `foo` suggests nothing.
 *
 * @example
 * suggestName('lookup_playr', ['lookup_player', 'list_teams']); // 'lookup_player'
 */
export function suggestName(name: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates].filter((candidate) => candidate !== name);
  if (list.length === 0 || name.length === 0) return undefined;
  const probe = name.slice(0, MAX_COMPARED);
  const loose = looseForm(probe);

  const sameLoose = list.find((candidate) => looseForm(candidate) === loose);
  if (sameLoose !== undefined) return sameLoose;

  if (loose.length >= 3) {
    const prefixed = list.filter((candidate) => {
      const other = looseForm(candidate);
      return other.length >= 3 && (other.startsWith(loose) || loose.startsWith(other));
    });
    if (prefixed.length === 1) return prefixed[0];
  }

  const limit = probe.length <= 4 ? 1 : probe.length <= 8 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of list) {
    const distance = editDistance(probe.toLowerCase(), candidate.slice(0, MAX_COMPARED).toLowerCase(), limit);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit && bestDistance * 2 < probe.length ? best : undefined;
}

function looseForm(name: string): string {
  return name.toLowerCase().replace(/[_\-\s]/g, '');
}

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), giving up early
 * once every entry of a row exceeds `limit` (the result is then `limit + 1`).
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i += 1) {
    current[0] = i;
    let rowMinimum = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] ?? 0) + 1);
      }
      current[j] = value;
      if (value < rowMinimum) rowMinimum = value;
    }
    if (rowMinimum > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length] ?? 0;
}
