import { Secret, TOTP } from 'otpauth';

/**
 * RFC 6238 as every authenticator app expects it (Google Authenticator and its peers ignore anything
 * else): HMAC-SHA-1, six digits, thirty-second steps (§4, §5.2), with the 160-bit secret RFC 4226 §4
 * recommends. `otpauth` computes the codes (docs/decisions.md, decision 34).
 */
export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
/** RFC 6238 §5.2: one step either way, for a phone's clock a little off and a code typed as it turns. */
export const TOTP_WINDOW = 1;

function totp(secretBase32: string, label = '', issuer = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A fresh random secret (160 bits), as the base32 "Setup key" an app is given. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/...` URI a QR code carries (Key Uri Format): the app reads issuer and account. */
export function totpUri(secretBase32: string, issuer: string, account: string): string {
  return totp(secretBase32, account, issuer).toString();
}

/** The RFC 6238 time step of `at` (epoch seconds). */
export function totpStep(at: number): number {
  return Math.floor(at / TOTP_PERIOD);
}

/** The code of `secretBase32` at `at` (tests and the bench compute codes as an app would). */
export function totpCode(secretBase32: string, at: number): string {
  return totp(secretBase32).generate({ timestamp: at * 1000 });
}

/**
 * The time step whose code `code` is, within TOTP_WINDOW steps of `at`; undefined when it is none.
 * Whether that step was used already is the store's to say (SecondFactorStore.useTotpStep).
 */
export function matchTotpStep(secretBase32: string, code: string, at: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secretBase32).validate({ token: code, timestamp: at * 1000, window: TOTP_WINDOW });
  return delta === null ? undefined : totpStep(at) + delta;
}
