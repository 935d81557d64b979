/**
 * Access tokens whose signature and claims this process has already verified, keyed by the exact
 * token string, so a token presented again (introspection, /v1, /userinfo) skips the signature check
 * (decision 27). Only that check is reused: expiry, audience, revocation and liveness are the caller's,
 * every time. Bound to one JWK Set: a different set (a key added, retired or revoked) empties it.
 *
 * Bounded as two generations of at most half of `maxEntries` each (a hit never reorders a Map): when
 * the young one fills it becomes the old one and the old one is dropped, so the least recently used
 * go first and never more than `maxEntries` are held, whatever tokens a caller sends (only tokens that
 * verified are ever added).
 */
export class VerifiedTokenCache<Claims, KeySet extends object> {
  private young = new Map<string, Claims>();
  private old = new Map<string, Claims>();
  private keySet: KeySet | undefined;
  private readonly generationSize: number;

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 2)
      throw new Error('the cache holds at least two entries');
    this.generationSize = Math.floor(maxEntries / 2);
  }

  /** Entries held now (a token may be in both generations only until the old one is dropped). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** The claims `token` verified to under `keySet`, if it was verified under that very set. */
  get(token: string, keySet: KeySet): Claims | undefined {
    if (keySet !== this.keySet) {
      this.clear(keySet);
      return undefined;
    }
    const claims = this.young.get(token);
    if (claims !== undefined) return claims;
    const older = this.old.get(token);
    // Used again: kept into the next generation.
    if (older !== undefined) this.set(token, older, keySet);
    return older;
  }

  set(token: string, claims: Claims, keySet: KeySet): void {
    if (keySet !== this.keySet) this.clear(keySet);
    if (this.young.size >= this.generationSize && !this.young.has(token)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(token, claims);
  }

  /** Forgets `token` (one found expired is of no more use). */
  delete(token: string): void {
    this.young.delete(token);
    this.old.delete(token);
  }

  private clear(keySet: KeySet): void {
    this.young = new Map();
    this.old = new Map();
    this.keySet = keySet;
  }
}
