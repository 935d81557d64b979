import type { BrowserSession, SessionAuthentication } from '../model.js';
import { AUTHENTICATION_METHODS, PASSWORD, type AmrValue, type FactorKind } from './methods.js';

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
 * Derives `auth_time`, `amr` and `acr` from a session's record (decision 30). A method this server no
 * longer knows proves nothing but still dates the session. `mfa` and the multi-factor `acr` need two
 * kinds of factor (a password and a one-time code), not two methods of one kind; any phishing-resistant
 * method (a passkey) gives the phishing-resistant `acr`.
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
  for (const { method: name } of record) {
    const method = methods.get(name);
    if (method === undefined) continue;
    for (const value of method.amr) amr.add(value);
    for (const factor of method.factors) factors.add(factor);
    phishingResistant ||= method.phishingResistant;
  }
  const multiFactor = factors.size > 1;
  if (multiFactor) amr.add('mfa');
  return {
    authTime: Math.max(...record.map((entry) => entry.at)),
    amr: [...amr],
    acr: phishingResistant ? ACR_PHISHING_RESISTANT : multiFactor ? ACR_MULTI_FACTOR : ACR_SINGLE_FACTOR,
  };
}
