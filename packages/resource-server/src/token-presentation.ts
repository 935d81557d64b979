/**
 * RFC 9449 §7: a token is accepted only as what it is. The one copy of that rule and its refusals,
 * pure and framework-free, shared by this library's resource server and the server's own resources
 * (`/v1`, `/userinfo`), which import it as `gatehouse-oauth-resource-server/token-presentation`
 * (docs/decisions.md, decision 26).
 */

/** The refusals (each an `invalid_token`), worded once. */
export const TOKEN_PRESENTATION_ERRORS = {
  /** A MAC token is never a bearer or DPoP token (docs/decisions.md, decision 3). */
  macToken: 'a MAC token must be presented with the MAC scheme',
  /** §7.2: a stolen bound token is worthless without the key; as a bearer token it is refused. */
  boundAsBearer: 'a DPoP-bound access token must be presented with the DPoP scheme and a DPoP proof',
  /** An unbound token under the DPoP scheme: no key binds it, so the proof would prove nothing. */
  unboundAsDpop: 'this access token is not DPoP-bound: present it with the Bearer scheme',
} as const;

/** What the presentation rule reads of a verified access token. */
export interface PresentedToken {
  /** A MAC token (`token_type` `mac`). */
  mac: boolean;
  /** Bound to a key (it has a `cnf`). */
  bound: boolean;
  /** The thumbprint of the key a DPoP proof must be made with (`cnf.jkt`), when it names one. */
  jkt: string | undefined;
}

/**
 * Why `token` may not be presented under `scheme` (`Authorization: Bearer` or the form or query of
 * RFC 6750 §2, or `Authorization: DPoP`, RFC 9449 §7.1), or undefined when it may: then a DPoP
 * presentation still needs a proof of the key `jkt` over the request.
 */
export function presentationProblem(scheme: 'bearer' | 'dpop', token: PresentedToken): string | undefined {
  if (token.mac) return TOKEN_PRESENTATION_ERRORS.macToken;
  if (scheme === 'bearer') return token.bound ? TOKEN_PRESENTATION_ERRORS.boundAsBearer : undefined;
  return !token.bound || token.jkt === undefined ? TOKEN_PRESENTATION_ERRORS.unboundAsDpop : undefined;
}
