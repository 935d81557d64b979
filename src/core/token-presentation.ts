import { InvalidAccessTokenError, type ValidAccessToken } from './access-token-validation.js';
import type { DpopVerifier } from './dpop.js';

/** How an access token came with a request to one of Gatehouse's own resources (/v1, /userinfo). */
export type TokenPresentation =
  /** `Authorization: Bearer`, or the form body or query (RFC 6750 §2). */
  | { scheme: 'bearer' }
  /**
   * `Authorization: DPoP` with the request's `DPoP` header values (RFC 9449 §7.1), its method and its
   * absolute URL as built from the issuer (never from the Host header).
   */
  | { scheme: 'dpop'; proofs: readonly string[]; method: string; url: string };

/**
 * RFC 9449 §7: a token is accepted only as what it is. A DPoP-bound token needs the DPoP scheme and a
 * proof of its key over this request (`ath` its hash); as a bearer token it is refused (§7.2: a stolen
 * bound token is worthless without the key). An unbound token under the DPoP scheme is refused too:
 * no key binds it, so the proof would prove nothing. A MAC token is never either (docs/decisions.md,
 * decision 3). Throws InvalidAccessTokenError (invalid_token) or the verifier's DpopProofError.
 */
export async function checkTokenPresentation(
  token: string,
  valid: ValidAccessToken,
  presentation: TokenPresentation,
  dpop: DpopVerifier,
): Promise<void> {
  if (valid.tokenType === 'mac') {
    throw new InvalidAccessTokenError('a MAC token must be presented with the MAC scheme');
  }
  if (presentation.scheme === 'bearer') {
    if (valid.tokenType === 'dpop') {
      throw new InvalidAccessTokenError(
        'a DPoP-bound access token must be presented with the DPoP scheme and a DPoP proof',
      );
    }
    return;
  }
  const jkt = valid.claims.cnf?.jkt;
  if (valid.tokenType !== 'dpop' || jkt === undefined) {
    throw new InvalidAccessTokenError(
      'this access token is not DPoP-bound: present it with the Bearer scheme',
    );
  }
  await dpop.verify({
    proofs: presentation.proofs,
    method: presentation.method,
    url: presentation.url,
    accessToken: { token, jkt },
  });
}
