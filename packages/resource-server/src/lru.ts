/**
 * A bounded cache that forgets what has not been used for longest, approximately: two generations of
 * at most half the size each. New entries and hits go to the young one; when it is full it becomes
 * the old one and the old one is dropped. A hit costs one or two Map look-ups and never reorders a
 * Map, which an exact LRU (delete and set again on every hit) would. For per-process caches whose
 * keys a sender chooses: never more than `maxEntries`.
 */
export class Lru<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly generationSize: number;

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 2) throw new Error('an LRU holds at least two entries');
    this.generationSize = Math.floor(maxEntries / 2);
  }

  /** Entries held now (a key may be in both generations only until the old one is dropped). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  get(key: K): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const older = this.old.get(key);
    // Used again: kept into the next generation.
    if (older !== undefined) this.set(key, older);
    return older;
  }

  set(key: K, value: V): void {
    if (this.young.size >= this.generationSize && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }
}
