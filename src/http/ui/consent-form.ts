import { GRANT_LIFETIMES } from '../../core/authorize/consent.js';
import { isSubset } from '../../core/scopes/scopes.js';
import { LIFETIME_OPTIONS, type ConsentPageInput } from './pages/consent-page.js';
import { field, fields } from './ui-context.js';

/** The lifetime the consent page proposes: 30 days. */
export const DEFAULT_LIFETIME = '2592000';

/**
 * OpenID Connect's `openid` scope is the sign-in itself (Core §3.1.2.1): the consent page lists it
 * without a box to untick, and an allowed request always keeps it. Refusing it is refusing: Deny.
 */
export const SIGN_IN_SCOPE: string = 'openid';

/** The lifetime control's value in seconds, null for "until I revoke it"; undefined when unknown. */
export function parseLifetime(value: string | undefined): number | null | undefined {
  if (value === 'forever') return null;
  const seconds = Number(value);
  return GRANT_LIFETIMES.includes(seconds) ? seconds : undefined;
}

/** What a posted consent form says, read against the scope the request asked for. */
export type ConsentAnswer =
  | { answer: 'deny' }
  | { answer: 'allow'; scope: string[]; lifetime: number | null }
  /** Allow with every box unticked: the page again, asking for one or Deny. */
  | { answer: 'none-ticked'; lifetime: string | undefined }
  /** Neither button, a scope not asked for, or an unknown lifetime: a forged or broken form. */
  | { answer: 'invalid'; problem: string };

/**
 * The consent form's answer (the authorization endpoint's and the device grant's pages): Allow or
 * Deny, the scopes left ticked (a subset of `requested`, in its order; `openid` kept, see
 * SIGN_IN_SCOPE), and the lifetime chosen.
 */
export function readConsentForm(body: unknown, requested: readonly string[], openid: boolean): ConsentAnswer {
  const decision = field(body, 'decision');
  if (decision === 'deny') return { answer: 'deny' };
  if (decision !== 'allow') return { answer: 'invalid', problem: 'Choose Allow or Deny.' };
  const ticked = fields(body, 'scope');
  if (openid && requested.includes(SIGN_IN_SCOPE)) ticked.push(SIGN_IN_SCOPE);
  const scope = [...new Set(ticked)];
  const lifetimeField = field(body, 'lifetime');
  const lifetime = parseLifetime(lifetimeField);
  if (!isSubset(scope, requested) || lifetime === undefined) {
    return { answer: 'invalid', problem: 'The form asked for access the application did not request.' };
  }
  if (scope.length === 0 && requested.length > 0) {
    return {
      answer: 'none-ticked',
      lifetime: LIFETIME_OPTIONS.some((o) => o.value === lifetimeField) ? lifetimeField : undefined,
    };
  }
  // Keep the request's order of scopes, narrowed to what stayed ticked.
  return { answer: 'allow', scope: requested.filter((name) => scope.includes(name)), lifetime };
}

/** How the consent page is shown again after an answer it cannot take; empty the first time. */
export interface ConsentRedisplay {
  /** The scopes left ticked; absent: every box ticked. */
  checked?: readonly string[];
  lifetime?: string | undefined;
  error?: string;
}

/**
 * The consent page's scope lines and form state, the same for the authorization endpoint's page and
 * the device grant's: for an OpenID Connect request `openid` is a line without a box (SIGN_IN_SCOPE),
 * every other scope a box, described as the scope registry describes it (its name when unknown).
 */
export function consentLines(
  known: readonly { name: string; description: string }[],
  scope: readonly string[],
  openid: boolean,
  redisplay: ConsentRedisplay = {},
): Pick<ConsentPageInput, 'fixed' | 'scopes' | 'lifetime' | 'error'> {
  const descriptions = new Map(known.map((s) => [s.name, s.description]));
  const describe = (name: string): string => descriptions.get(name) ?? name;
  const fixed = openid ? scope.filter((name) => name === SIGN_IN_SCOPE) : [];
  return {
    fixed: fixed.map((name) => ({ name, description: describe(name) })),
    scopes: scope
      .filter((name) => !fixed.includes(name))
      .map((name) => ({
        name,
        description: describe(name),
        checked: redisplay.checked?.includes(name) ?? true,
      })),
    lifetime: redisplay.lifetime ?? DEFAULT_LIFETIME,
    ...(redisplay.error !== undefined ? { error: redisplay.error } : {}),
  };
}
