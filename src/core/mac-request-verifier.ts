import type { Clock } from '../shared/clock.js';
import {
  checkMacFreshness,
  macReplay,
  macRequestTime,
  parseMacHeader,
  verifyBodyHash,
  verifyMacSignature,
  type MacRequest,
} from '../resource-server/mac.js';
import { TokenError } from '../resource-server/rfc6750.js';
import {
  AccessTokenValidator,
  InvalidAccessTokenError,
  type ValidAccessToken,
} from './access-token-validation.js';
import { deriveMacKey, ISSUED_MAC_ALGORITHM } from './mac.js';
import type { MacNonceStore } from './ports.js';

export interface MacRequestVerifierOptions {
  validator: AccessTokenValidator;
  nonces: MacNonceStore;
  clock: Clock;
  macSecret: Buffer;
  /** How far the request's time may be from the server's clock, either way (seconds). */
  windowSeconds: number;
}

/**
 * Gatehouse as a resource server for MAC tokens (docs/decisions.md, decision 3): the token is validated
 * like a bearer token, its key re-derived from the server secret, then the request's signature,
 * body hash, time window and nonce are checked, in that order, so only authentic requests spend a
 * nonce row.
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
    const key = deriveMacKey(this.options.macSecret, valid.claims.jti);
    verifyMacSignature(credentials, request, key, ISSUED_MAC_ALGORITHM);
    verifyBodyHash(credentials, ISSUED_MAC_ALGORITHM, rawBody);
    const now = this.options.clock.now();
    const time = macRequestTime(credentials, valid.claims.iat);
    checkMacFreshness(time, now, this.options.windowSeconds);
    // Kept until the window has passed: after that, the timestamp check refuses a replay by itself.
    const first = await this.options.nonces.remember(
      valid.claims.jti,
      credentials.nonce,
      time + this.options.windowSeconds + 1,
      now,
    );
    if (!first) throw macReplay();
    return valid;
  }
}
