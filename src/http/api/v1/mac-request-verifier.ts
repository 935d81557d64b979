import {
  checkMacFreshness,
  macReplay,
  macRequestTime,
  parseMacHeader,
  verifyBodyHash,
  verifyMacSignature,
  type MacRequest,
} from 'gatehouse-oauth-resource-server/mac';
import { TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import type { Clock } from '../../../shared/clock.js';
import {
  AccessTokenValidator,
  InvalidAccessTokenError,
  type ValidAccessToken,
} from '../../../core/tokens/access-token-validation.js';
import { ISSUED_MAC_ALGORITHM, type MacTokens } from '../../../core/keys/mac.js';

export interface MacRequestVerifierOptions {
  validator: AccessTokenValidator;
  /** The engine's MAC keys, nonce record and time window. */
  macTokens: MacTokens;
  clock: Clock;
}

/**
 * Gatehouse as a resource server for MAC tokens (docs/decisions.md, decision 3): the token is validated
 * like a bearer token, its key re-derived from the server secret, then the request's signature,
 * body hash, time window and nonce are checked, in that order, so only authentic requests spend a
 * nonce row. It belongs to the HTTP side: the header format, the request checks and the RFC 6750
 * refusals are the resource-server library's, which core does not import (docs/decisions.md,
 * decision 16); core gives the token's validation, its key and the nonce record (`MacTokens`).
 */
export class MacRequestVerifier {
  constructor(private readonly options: MacRequestVerifierOptions) {}

  /**
   * `request` carries the server's own public host and port, never the request's Host header;
   * `rawBody` is the body as received, empty when the request had none, undefined when one was sent
   * but not kept (then a bodyhash is refused).
   */
  async verify(header: string, request: MacRequest, rawBody: Buffer | undefined): Promise<ValidAccessToken> {
    const invalid = (description: string) => new TokenError('invalid_token', description, { scheme: 'mac' });
    const credentials = parseMacHeader(header);
    let valid: ValidAccessToken;
    try {
      valid = await this.options.validator.validate(credentials.id);
    } catch (error) {
      if (error instanceof InvalidAccessTokenError) throw invalid(error.description);
      throw error;
    }
    // A bearer token has no key: it cannot be presented with the MAC scheme.
    if (valid.tokenType !== 'mac') throw invalid('this access token is not a MAC token');
    const key = this.options.macTokens.keyFor(valid.claims.jti);
    verifyMacSignature(credentials, request, key, ISSUED_MAC_ALGORITHM);
    verifyBodyHash(credentials, ISSUED_MAC_ALGORITHM, rawBody);
    const now = this.options.clock.now();
    const time = macRequestTime(credentials, valid.claims.iat);
    const { windowSeconds } = this.options.macTokens;
    checkMacFreshness(time, now, windowSeconds);
    // Kept until the window has passed: after that, the timestamp check refuses a replay by itself.
    const first = await this.options.macTokens.rememberNonce(
      valid.claims.jti,
      credentials.nonce,
      time + windowSeconds + 1,
    );
    if (!first) throw macReplay();
    return valid;
  }
}
