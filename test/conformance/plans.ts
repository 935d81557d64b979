import type { ModuleName } from './modules.js';
import type { PlanEntry } from './plan.js';
import type { ResponseType, Variant } from './support.js';

// The certification plans of the conformance suite, module by module, in their order: Basic,
// Implicit and Hybrid OP, and their Form Post variants (the same lists with response_mode=form_post).
// docs/conformance.md says what each module covers and what Gatehouse does not support.

const variant = (responseType: ResponseType): Variant => ({ responseType, responseMode: 'default' });

/** oidcc-basic-certification-test-plan: response_type=code, client_secret_basic. */
export const BASIC_PLAN: readonly PlanEntry[] = [
  {
    variant: variant('code'),
    modules: [
      'oidcc-server',
      'oidcc-response-type-missing',
      'oidcc-idtoken-signature',
      'oidcc-idtoken-unsigned',
      'oidcc-userinfo-get',
      'oidcc-userinfo-post-header',
      'oidcc-userinfo-post-body',
      'oidcc-ensure-request-without-nonce-succeeds-for-code-flow',
      'oidcc-scope-profile',
      'oidcc-scope-email',
      'oidcc-scope-address',
      'oidcc-scope-phone',
      'oidcc-scope-all',
      'oidcc-ensure-other-scope-order-succeeds',
      'oidcc-display-page',
      'oidcc-display-popup',
      'oidcc-prompt-login',
      'oidcc-prompt-none-not-logged-in',
      'oidcc-prompt-none-logged-in',
      'oidcc-max-age-1',
      'oidcc-max-age-10000',
      'oidcc-ensure-request-with-unknown-parameter-succeeds',
      'oidcc-id-token-hint',
      'oidcc-login-hint',
      'oidcc-ui-locales',
      'oidcc-claims-locales',
      'oidcc-ensure-request-with-acr-values-succeeds',
      'oidcc-codereuse',
      'oidcc-codereuse-30seconds',
      'oidcc-ensure-registered-redirect-uri',
      'oidcc-ensure-post-request-succeeds',
      // The plan runs this one with client_secret_post.
      'oidcc-server-client-secret-post',
      'oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported',
      'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported',
      'oidcc-claims-essential',
      'oidcc-ensure-request-object-with-redirect-uri',
      'oidcc-refresh-token',
      'oidcc-ensure-request-with-valid-pkce-succeeds',
    ],
  },
];

/** The Implicit plan's list, run for id_token and for id_token token. */
const IMPLICIT_MODULES: readonly ModuleName[] = [
  'oidcc-server',
  'oidcc-idtoken-signature',
  'oidcc-ensure-request-without-nonce-fails',
  'oidcc-scope-profile',
  'oidcc-scope-email',
  'oidcc-scope-address',
  'oidcc-scope-phone',
  'oidcc-scope-all',
  'oidcc-ensure-other-scope-order-succeeds',
  'oidcc-display-page',
  'oidcc-display-popup',
  'oidcc-prompt-login',
  'oidcc-prompt-none-not-logged-in',
  'oidcc-prompt-none-logged-in',
  'oidcc-max-age-1',
  'oidcc-max-age-10000',
  'oidcc-ensure-request-with-unknown-parameter-succeeds',
  'oidcc-id-token-hint',
  'oidcc-login-hint',
  'oidcc-ui-locales',
  'oidcc-claims-locales',
  'oidcc-ensure-request-with-acr-values-succeeds',
  'oidcc-ensure-registered-redirect-uri',
  'oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported',
  'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported',
  'oidcc-ensure-request-object-with-redirect-uri',
  'oidcc-claims-essential',
];

/** oidcc-implicit-certification-test-plan. */
export const IMPLICIT_PLAN: readonly PlanEntry[] = [
  { variant: variant('id_token'), modules: IMPLICIT_MODULES },
  {
    variant: variant('id_token token'),
    modules: [
      ...IMPLICIT_MODULES,
      // Run once, for id_token token only: the UserInfo modules need its access token.
      'oidcc-userinfo-get',
      'oidcc-userinfo-post-header',
      'oidcc-userinfo-post-body',
      'oidcc-response-type-missing',
    ],
  },
];

/** The Hybrid plan's list for a response type; `nonce` is the type's nonce module. */
function hybridModules(nonce: ModuleName, first: boolean): ModuleName[] {
  return [
    'oidcc-server',
    // Run for code id_token only: the same for every response type.
    ...(first ? (['oidcc-response-type-missing'] as const) : []),
    'oidcc-idtoken-signature',
    'oidcc-userinfo-get',
    'oidcc-userinfo-post-header',
    'oidcc-userinfo-post-body',
    nonce,
    'oidcc-scope-profile',
    'oidcc-scope-email',
    'oidcc-scope-address',
    'oidcc-scope-phone',
    'oidcc-scope-all',
    ...(first ? (['oidcc-ensure-other-scope-order-succeeds'] as const) : []),
    'oidcc-display-page',
    'oidcc-display-popup',
    'oidcc-prompt-login',
    'oidcc-prompt-none-not-logged-in',
    'oidcc-prompt-none-logged-in',
    'oidcc-max-age-1',
    'oidcc-max-age-10000',
    'oidcc-ensure-request-with-unknown-parameter-succeeds',
    'oidcc-id-token-hint',
    'oidcc-login-hint',
    'oidcc-ui-locales',
    'oidcc-claims-locales',
    'oidcc-ensure-request-with-acr-values-succeeds',
    'oidcc-codereuse',
    'oidcc-codereuse-30seconds',
    'oidcc-ensure-registered-redirect-uri',
    // The plan runs this one with client_secret_post.
    'oidcc-server-client-secret-post',
    'oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported',
    'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported',
    'oidcc-claims-essential',
    'oidcc-ensure-request-object-with-redirect-uri',
    'oidcc-refresh-token',
    ...(first ? (['oidcc-ensure-request-with-valid-pkce-succeeds'] as const) : []),
  ];
}

/** oidcc-hybrid-certification-test-plan: code id_token, code token, code id_token token. */
export const HYBRID_PLAN: readonly PlanEntry[] = [
  {
    variant: variant('code id_token'),
    modules: hybridModules('oidcc-ensure-request-without-nonce-fails', true),
  },
  {
    variant: variant('code token'),
    modules: hybridModules('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', false),
  },
  {
    variant: variant('code id_token token'),
    modules: hybridModules('oidcc-ensure-request-without-nonce-fails', false),
  },
];

/**
 * The modules whose answer travels differently under form_post: the success response, and the errors
 * sent back to the client (ensure-request-without-nonce-* and the request object modules' too).
 */
const DELIVERY_MODULES: readonly ModuleName[] = [
  'oidcc-server',
  'oidcc-ensure-request-without-nonce-fails',
  'oidcc-ensure-request-without-nonce-succeeds-for-code-flow',
  'oidcc-prompt-none-not-logged-in',
  'oidcc-prompt-none-logged-in',
  'oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported',
  'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported',
];

/**
 * A Form Post plan (AbstractFormPostTestPlan: the plan's entries with response_mode=form_post). The
 * entry of `full` runs every module; the plan's other response types run the modules whose answer
 * travels differently (DELIVERY_MODULES): the rest do the same thing whatever carries the response,
 * and running them once per store keeps the file within minutes on two cores.
 */
export function formPostPlan(plan: readonly PlanEntry[], full: ResponseType): PlanEntry[] {
  return plan.map((entry) => ({
    variant: { ...entry.variant, responseMode: 'form_post' },
    modules:
      entry.variant.responseType === full
        ? entry.modules
        : entry.modules.filter((name) => DELIVERY_MODULES.includes(name)),
  }));
}
