import type { BrowserSession, SessionAuthentication } from '../model.js';
import { AUTHENTICATION_METHODS, FEDERATED, PASSWORD, type AmrValue, type FactorKind } from './methods.js';

/**
 * The `acr` values (OpenID Connect Core §2) of docs/decisions.md, decision 30, weakest first. Today
 * every sign-in is single-factor; the other two come with second factors and passkeys.
 */
export const ACR_SINGLE_FACTOR = 'urn:gatehouse:acr:single-factor';
export const ACR_MULTI_FACTOR = 'urn:gatehouse:acr:multi-factor';
/** OpenID Extended Authentication Profile ACR Values 1.0: phishing-resistant authentication. */
export const ACR_PHISHING_RESISTANT = 'phr';

/** What a browser session's sign-ins are worth, as OpenID Connect reports it (Core §2). */
export interface Assurance {
  /** `auth_time`: when the latest method was used. */
  authTime: number;
  /** RFC 8176 values, in the order the methods were used, `mfa` last when two kinds of factor were. */
  amr: AmrValue[];
  acr: string;
}

/**
 * A sign-in, as an authorization request is answered under it: who, when the latest method was used
 * (Core §2 `auth_time`), and the browser session's stable, non-secret id (`sid`). `amr` and `acr` are
 * what the session's methods are worth (decision 30), derived by BrowserSessions; ID tokens do not
 * carry them yet.
 */
export interface Authentication {
  userId: string;
  authTime: number;
  sid: string;
  amr?: readonly AmrValue[];
  acr?: string;
}

/** Who is signed in: the user, and for an OpenID Connect request the sign-in itself (Authentication). */
export type SignedIn = Pick<Authentication, 'userId'> | Authentication;

/**
 * The methods a session records (decision 30). A session that records none (stored before migration
 * 0016) was started by a password at its creation: the only way to sign in there was.
 */
export function sessionAuthentications(session: BrowserSession): readonly SessionAuthentication[] {
  const recorded = session.authentications;
  return recorded !== undefined && recorded.length > 0
    ? recorded
    : [{ method: PASSWORD.name, at: session.createdAt }];
}

/**
 * RFC 8176 §2's registered `amr` values an upstream may send, each with the kinds of factor it proves
 * (decision 40): knowing (`pwd`, `pin`, `kba`), having (a code, a key, a card), being (biometrics; and
 * `user`, which this server reports of a passkey's user verification, as PASSKEY counts it). `mfa` is
 * two kinds at least. Location, risk and the rest prove no factor of their own but are passed on.
 * Values outside the registry are dropped: nothing here knows what they prove.
 */
const UPSTREAM_AMR: ReadonlyMap<string, readonly FactorKind[]> = new Map<string, readonly FactorKind[]>([
  ['pwd', ['knowledge']],
  ['pin', ['knowledge']],
  ['kba', ['knowledge']],
  ['otp', ['possession']],
  ['sms', ['possession']],
  ['tel', ['possession']],
  ['hwk', ['possession']],
  ['swk', ['possession']],
  ['sc', ['possession']],
  ['pop', ['possession']],
  ['user', ['inherence']],
  ['fpt', ['inherence']],
  ['face', ['inherence']],
  ['iris', ['inherence']],
  ['retina', ['inherence']],
  ['vbm', ['inherence']],
  ['mfa', ['knowledge', 'possession']],
  ['geo', []],
  ['rba', []],
  ['wia', []],
  ['mca', []],
]);

/**
 * The upstream `acr` values that say a phishing-resistant sign-in (OpenID Extended Authentication
 * Profile ACR Values 1.0: `phr`, and `phrh`, phishing-resistant and hardware-protected).
 */
const UPSTREAM_PHISHING_RESISTANT_ACR: ReadonlySet<string> = new Set([ACR_PHISHING_RESISTANT, 'phrh']);

/** What a trusted upstream's `amr` and `acr` (SessionAuthentication.upstream) are worth here (decision 40). */
export interface UpstreamAssurance {
  /** Its registered `amr` values, in the order sent, without `mfa` (derived here, as for every sign-in). */
  amr: AmrValue[];
  factors: Set<FactorKind>;
  phishingResistant: boolean;
}

/**
 * Reads a trusted upstream's `amr` and `acr` (decision 40): its registered `amr` values and the kinds
 * of factor they prove; an upstream `acr` of `phr`/`phrh` is phishing-resistant (and, as this server
 * ranks it, above multi-factor); this server's own multi-factor `acr`, which an upstream Gatehouse
 * sends, is two kinds of factor.
 */
export function upstreamAssurance(upstream: { amr?: readonly string[]; acr?: string }): UpstreamAssurance {
  const amr: AmrValue[] = [];
  const factors = new Set<FactorKind>();
  for (const value of upstream.amr ?? []) {
    const kinds = UPSTREAM_AMR.get(value);
    if (kinds === undefined) continue;
    for (const kind of kinds) factors.add(kind);
    if (value !== 'mfa' && !amr.includes(value as AmrValue)) amr.push(value as AmrValue);
  }
  if (upstream.acr === ACR_MULTI_FACTOR) {
    factors.add('knowledge');
    factors.add('possession');
  }
  const phishingResistant = upstream.acr !== undefined && UPSTREAM_PHISHING_RESISTANT_ACR.has(upstream.acr);
  return { amr, factors, phishingResistant };
}

/**
 * Derives `auth_time`, `amr` and `acr` from a session's record (decision 30). A method this server no
 * longer knows proves nothing but still dates the session. `mfa` and the multi-factor `acr` need two
 * kinds of factor (a password and a one-time code), not two methods of one kind; any phishing-resistant
 * method (a passkey) gives the phishing-resistant `acr`.
 *
 * A federated sign-in (decision 40) reports `fed`, and counts as one factor unless it carries what a
 * trusted upstream said (`upstream`, stored only for a provider with trustUpstreamAssurance): then its
 * registered `amr` values are reported after `fed`, the kinds of factor they prove stand for the
 * federated sign-in's own (when they prove any), and an upstream `phr` makes it phishing-resistant.
 */
export function assurance(
  record: readonly SessionAuthentication[],
  methods: ReadonlyMap<
    string,
    { amr: readonly AmrValue[]; factors: readonly FactorKind[]; phishingResistant: boolean }
  > = AUTHENTICATION_METHODS,
): Assurance {
  if (record.length === 0) throw new Error('a session records at least one sign-in');
  const amr = new Set<AmrValue>();
  const factors = new Set<FactorKind>();
  let phishingResistant = false;
  for (const entry of record) {
    const method = methods.get(entry.method);
    if (method === undefined) continue;
    for (const value of method.amr) amr.add(value);
    const upstream =
      entry.method === FEDERATED.name && entry.upstream !== undefined
        ? upstreamAssurance(entry.upstream)
        : undefined;
    if (upstream === undefined) {
      for (const factor of method.factors) factors.add(factor);
      phishingResistant ||= method.phishingResistant;
      continue;
    }
    for (const value of upstream.amr) amr.add(value);
    for (const factor of upstream.factors.size > 0 ? upstream.factors : method.factors) factors.add(factor);
    phishingResistant ||= method.phishingResistant || upstream.phishingResistant;
  }
  const multiFactor = factors.size > 1;
  if (multiFactor) amr.add('mfa');
  return {
    authTime: Math.max(...record.map((entry) => entry.at)),
    amr: [...amr],
    acr: phishingResistant ? ACR_PHISHING_RESISTANT : multiFactor ? ACR_MULTI_FACTOR : ACR_SINGLE_FACTOR,
  };
}

/**
 * The `acr` values this server reports, weakest first (docs/decisions.md, decision 36): a value
 * satisfies any request for itself or a weaker one. Discovery lists them as `acr_values_supported`.
 */
export const ACR_VALUES: readonly string[] = [ACR_SINGLE_FACTOR, ACR_MULTI_FACTOR, ACR_PHISHING_RESISTANT];

/** An `acr` value's place in ACR_VALUES; -1 for a value this server does not know. */
export function acrRank(acr: string | undefined): number {
  return acr === undefined ? -1 : ACR_VALUES.indexOf(acr);
}

/**
 * What an authorization request asks of the sign-in that answers it (docs/decisions.md, decision
 * 36): `acr_values` (Core §3.1.2.1, RFC 9470 §4), voluntary; or the `claims` parameter's `acr` with
 * `essential` (Core §5.5.1.1), which fails the request when not met; and `max_age` (Core §3.1.2.1),
 * the oldest sign-in, in seconds, that may answer without a new one.
 */
export interface AuthenticationRequirement {
  /** The `acr` values asked for, any one of which will do, as sent (unknown ones included). */
  acrValues: readonly string[];
  /** Core §5.5.1.1: an essential `acr`; unmet after a new sign-in, the request fails. */
  essential: boolean;
  maxAge: number | null;
}

/** A requirement that asks nothing: what a request without acr_values, claims or max_age has. */
export const NO_REQUIREMENT: AuthenticationRequirement = Object.freeze({
  acrValues: [],
  essential: false,
  maxAge: null,
});

/** Why a sign-in does not satisfy a requirement: too old (`max_age`), or too weak (`acr`). */
export type Unsatisfied = 'max-age' | 'acr';

/**
 * The weakest of the known values a requirement asks for (any one of the list will do, and a
 * stronger sign-in satisfies a request for a weaker value); undefined when it names no known value
 * (nothing asked, or only values of other servers: Core §3.1.2.1 leaves such voluntary values unmet).
 */
export function weakestAcrAsked(requirement: AuthenticationRequirement): string | undefined {
  const ranks = requirement.acrValues.map(acrRank).filter((rank) => rank >= 0);
  return ranks.length === 0 ? undefined : ACR_VALUES[Math.min(...ranks)];
}

/**
 * An essential `acr` no sign-in here can ever give: every value asked for is unknown to this server
 * (Core §5.5.1.1: a failed authentication, answered without asking anyone to sign in in vain).
 */
export function unreachable(requirement: AuthenticationRequirement): boolean {
  return (
    requirement.essential && requirement.acrValues.length > 0 && weakestAcrAsked(requirement) === undefined
  );
}

/**
 * Whether a sign-in satisfies what a request asks (docs/decisions.md, decision 36): undefined when it
 * does, else why not. `max_age` first (the sign-in is older than the request accepts), then the `acr`:
 * the sign-in's must rank at least with the weakest known value asked for (single-factor <
 * multi-factor < phishing-resistant). A voluntary acr counts here too: it is what a new sign-in is
 * asked for; whether its absence after one fails the request is the caller's (`essential`). Used by
 * the authorization endpoint, and by a second step of sign-in to decide whether to ask for a second
 * factor even when the first one alone would do.
 */
export function unsatisfied(
  authentication: Pick<Authentication, 'authTime' | 'acr'>,
  requirement: AuthenticationRequirement,
  now: number,
): Unsatisfied | undefined {
  if (requirement.maxAge !== null && now - authentication.authTime > requirement.maxAge) return 'max-age';
  const weakest = weakestAcrAsked(requirement);
  if (weakest !== undefined && acrRank(authentication.acr) < acrRank(weakest)) return 'acr';
  return undefined;
}

/** unsatisfied(), as a yes or no. */
export function satisfies(
  authentication: Pick<Authentication, 'authTime' | 'acr'>,
  requirement: AuthenticationRequirement,
  now: number,
): boolean {
  return unsatisfied(authentication, requirement, now) === undefined;
}

/**
 * The `acr` an ID token and the tokens of a response report (Core §5.5.1.1; never more than what
 * happened): of the known values asked for, the strongest the sign-in reached, so that a relying party
 * gets a value it asked for (Core §5.5.1.1: an essential one MUST match one of the values asked for);
 * otherwise the sign-in's own. A sign-in that reached none of them reports its own (a voluntary
 * request answered with what was reached; an essential one never gets here).
 */
export function reportedAcr(
  acr: string | undefined,
  requirement: AuthenticationRequirement,
): string | undefined {
  const rank = acrRank(acr);
  let reported: string | undefined;
  for (const value of requirement.acrValues) {
    const asked = acrRank(value);
    if (asked >= 0 && asked <= rank && (reported === undefined || asked > acrRank(reported))) {
      reported = value;
    }
  }
  return reported ?? acr;
}
