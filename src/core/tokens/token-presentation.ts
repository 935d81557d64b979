import { presentationProblem } from 'gatehouse-oauth-resource-server/token-presentation';
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
 * RFC 9449 §7: a token is accepted only as what it is (the rule and its wording are the library's,
 * `gatehouse-oauth-resource-server/token-presentation`, decision 26): a DPoP-bound token needs the
 * DPoP scheme and a proof of its key over this request (`ath` its hash); a MAC token is never either.
 * Throws InvalidAccessTokenError (invalid_token) or the verifier's DpopProofError.
 */
export async function checkTokenPresentation(
  token: string,
  valid: ValidAccessToken,
  presentation: TokenPresentation,
  dpop: DpopVerifier,
): Promise<void> {
  const bound = valid.tokenType === 'dpop';
  const jkt = bound ? valid.claims.cnf?.jkt : undefined;
  const refused = presentationProblem(presentation.scheme, { mac: valid.tokenType === 'mac', bound, jkt });
  if (refused !== undefined) throw new InvalidAccessTokenError(refused);
  if (presentation.scheme === 'bearer' || jkt === undefined) return;
  await dpop.verify({
    proofs: presentation.proofs,
    method: presentation.method,
    url: presentation.url,
    accessToken: { token, jkt },
  });
}
