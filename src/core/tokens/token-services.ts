import type { AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import { AccessTokenValidator } from './access-token-validation.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Storage } from '../ports.js';
import { TokenIntrospector } from './token-introspection.js';
import { TokenRevoker } from './token-revocation.js';

export interface TokenServices {
  validator: AccessTokenValidator;
  introspector: TokenIntrospector;
  revoker: TokenRevoker;
}

/** One validator per process, shared by introspection, revocation and the /v1 API's own authentication. */
export function createTokenServices(deps: {
  keyRing: Pick<KeyRing, 'verificationJwks' | 'refresh'>;
  storage: Storage;
  clock: Clock;
  /** The issuer URL; also the audience of access tokens for Gatehouse's own API (see compose/gatehouse.ts). */
  issuer: string;
  macSecret: Buffer;
  /** Where RFC 7009 revocations are recorded (decision 41). */
  audit?: AuditLog;
}): TokenServices {
  const { storage, clock, issuer } = deps;
  const validator = new AccessTokenValidator({
    keyRing: deps.keyRing,
    storage,
    clock,
    issuer,
  });
  return {
    validator,
    introspector: new TokenIntrospector({ validator, storage, clock, issuer, macSecret: deps.macSecret }),
    revoker: new TokenRevoker({ validator, storage, clock, ...(deps.audit ? { audit: deps.audit } : {}) }),
  };
}
