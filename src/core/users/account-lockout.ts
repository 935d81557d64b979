import { isIPv4, isIPv6 } from 'node:net';
import type { Clock } from '../../shared/clock.js';
import { sha256 } from '../../shared/crypto.js';
import type { ThrottleStore } from '../ports.js';

/**
 * The lockout policy for password checks (brute-force throttling). Attempts are counted per user name
 * *and source*: the attacker's source is locked, not the user. A count per user name alone would let
 * anyone keep any named account locked by sending wrong passwords for it; counted per source, the
 * right password from a source that has not been failing still goes through. Every attempt for a
 * (user name, source) pair is counted in the shared store before the password is checked; once
 * `maxAttempts` have been made inside one window of `windowSeconds` (opened by the first attempt),
 * further attempts from that source are refused without a password check until the window ends. A
 * correct password clears that pair's count. The count lives in the store, so every process and every
 * way in (the password grant, the sign-in page) shares one allowance per (user name, source).
 *
 * There is deliberately no ceiling per user name across sources: any ceiling that refuses the right
 * password can be reached by an attacker with enough sources, which brings the lockout back. Guessing
 * from many sources stays bounded per source by this count, by the failures per source across user
 * names (`failuresPerSource`), by the per-address request rate limits, and by argon2id's cost.
 */
export interface LockoutPolicy {
  maxAttempts: number;
  windowSeconds: number;
}

/**
 * A registered user name has at most 128 characters (user-registry.ts); a longer one cannot exist, so
 * it is answered like a wrong password before anything is looked up or counted under its name.
 */
export const MAX_USERNAME_CHARACTERS = 128;

export function cannotBeUsername(username: string): boolean {
  // Code points, as the user registry counts them; the UTF-16 length bounds the work first.
  return username.length > MAX_USERNAME_CHARACTERS * 2 || [...username].length > MAX_USERNAME_CHARACTERS;
}

/** Expands an IPv6 address to its eight groups; undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const plain = address.split('%', 1)[0] ?? '';
  if (!isIPv6(plain)) return undefined;
  let text = plain;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number);
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length > 1 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(fill).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The source a request is counted under: an IPv4 address as it is; an IPv6 address by its /64
 * prefix, the least an end site is assigned (RFC 6177), so that stepping through the addresses of one
 * prefix gives no fresh allowance; an IPv4-mapped IPv6 address as its IPv4 address. Anything else (a
 * forwarded value that is no address) is hashed, so a key never grows with what a client sends.
 */
export function requestSource(address: string): string {
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  if (groups === undefined) return `h:${sha256(address)}`;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The store key of a (user name, source) count, whatever the name's case; hashed, so it is short. */
export const lockoutKey = (username: string, source: string): string =>
  `password:user:${sha256(`${username.toLowerCase()}\n${requestSource(source)}`)}`;

/** The store key of a source's failed passwords across user names (password grant and sign-in page). */
export const sourceFailuresKey = (source: string): string => `password:source:${requestSource(source)}`;

export class AccountLockout {
  constructor(
    private readonly throttle: ThrottleStore,
    private readonly clock: Clock,
    private readonly policy: LockoutPolicy,
  ) {}

  /**
   * Counts one attempt for `username` from `source`; returns the seconds to wait when that pair is
   * locked, or undefined when the password may be checked. One atomic upsert: a burst of parallel
   * guesses from several processes cannot all pass a look-then-count check at once.
   */
  async reserve(username: string, source: string): Promise<number | undefined> {
    const now = this.clock.now();
    const { count, resetAt } = await this.throttle.hit(
      lockoutKey(username, source),
      this.policy.windowSeconds,
      now,
    );
    return count > this.policy.maxAttempts ? Math.max(1, resetAt - now) : undefined;
  }

  /** The password was right: this source's count for the name starts again. */
  async succeeded(username: string, source: string): Promise<void> {
    await this.throttle.reset(lockoutKey(username, source));
  }
}

/**
 * Failed passwords per source across user names: a source that keeps failing (one name after another)
 * is refused for the rest of the window. Only the failing source is refused; nobody can spend another
 * source's allowance.
 */
export class SourceFailures {
  constructor(
    private readonly throttle: ThrottleStore,
    private readonly clock: Clock,
    private readonly policy: { maxFailures: number; windowSeconds: number },
  ) {}

  /** Seconds to wait when `source` has failed too often, else undefined. */
  async refusal(source: string): Promise<number | undefined> {
    const now = this.clock.now();
    const { count, resetAt } = await this.throttle.peek(sourceFailuresKey(source), now);
    return count >= this.policy.maxFailures ? Math.max(1, resetAt - now) : undefined;
  }

  async failed(source: string): Promise<void> {
    await this.throttle.hit(sourceFailuresKey(source), this.policy.windowSeconds, this.clock.now());
  }
}
