import type { JsonValue, WorldPath, WorldState, WorldWriter } from '../../src/index.js';

type Path = readonly string[];

/**
 * Read-modify-write of several world paths at once. Each path is held with `world.update` (an
 * exclusive lock) while `change` computes the new values from the current ones; nothing is
 * written unless `change` returns, so a refusal (thrown) leaves the world as it was.
 *
 * Locks are always taken in one global order (sorted paths). Two traders that each need the
 * other's purse then queue instead of each holding one purse and waiting for the other forever.
 *
 * @example
 * await transact(world, [['market', 'coin', 'amara'], ['market', 'stock', 'tea']], ([coin, stock]) => [coin - 4, stock - 1]);
 */
export async function transact(
  world: WorldState,
  paths: readonly Path[],
  change: (current: (JsonValue | undefined)[]) => JsonValue[],
  writer?: WorldWriter,
): Promise<JsonValue[]> {
  const order = paths.map((path, index) => ({ path, index, key: path.join('\u0000') })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // A path inside another (or twice the same) would wait for its own lock.
  for (const [at, { path }] of order.entries()) {
    for (const { path: other } of order.slice(at + 1)) {
      const shorter = path.length <= other.length ? path : other;
      const longer = shorter === path ? other : path;
      if (shorter.every((key, index) => longer[index] === key)) throw new Error(`transact: paths ${path.join('.')} and ${other.join('.')} overlap`);
    }
  }
  const current: (JsonValue | undefined)[] = new Array(paths.length);
  let next: JsonValue[] = [];
  const hold = async (position: number): Promise<void> => {
    if (position === order.length) {
      next = change(current);
      return;
    }
    const { path, index } = order[position]!;
    await world.update(
      path as WorldPath,
      async (value) => {
        current[index] = value;
        await hold(position + 1);
        // Unchanged values are not rewritten: only real changes become `world.changed` events.
        return next[index] === value ? undefined : next[index];
      },
      writer,
    );
  };
  await hold(0);
  return next;
}
