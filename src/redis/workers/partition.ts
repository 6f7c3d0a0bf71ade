/**
 * Which partition an agent is in: FNV-1a of its name, mod `partitions`. Stable across processes
 * and runs (a name always lands in the same partition for the same count), and independent of
 * cast order, so adding an agent moves no other.
 */
export function partitionOf(agent: string, partitions: number): number {
  return fnv1a(agent) % partitions;
}

/**
 * Which worker owns a partition: rendezvous (highest random weight) hashing over the live
 * workers. When a worker joins or leaves, only the partitions whose highest weight changed move
 * (about 1/N of them), and every process that sees the same live set agrees without talking.
 */
export function ownerOf(partition: number, workers: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const worker of workers) {
    const weight = mix(fnv1a(worker) ^ Math.imul(partition + 1, 0x9e3779b1));
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && worker < best)) {
      best = worker;
      bestWeight = weight;
    }
  }
  return best;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}

/** MurmurHash3's finalizer: nearby inputs (partition 1, 2, …) give unrelated weights. */
function mix(value: number): number {
  let hash = value;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}
