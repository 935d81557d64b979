import type { ModuleName } from './modules.js';
import type { PlanEntry } from './plan.js';
import type { ResponseType, Variant } from '../helpers/conformance-variants.js';

// The certification plans of the conformance suite, module by module, in their order: Basic,
// Implicit and Hybrid OP, and their Form Post variants (the same lists with response_mode=form_post).
// docs/conformance.md says what each module covers and what Gatehouse does not support.

const variant = (responseType: ResponseType): Variant => ({ responseType, responseMode: 'default' });

/** The UserInfo modules: run where the response carries an access token. */
const USERINFO_MODULES: readonly ModuleName[] = [
  'oidcc-userinfo-get',
  'oidcc-userinfo-post-header',
  'oidcc-userinfo-post-body',
];

/** The scope modules (OpenID Connect Core §5.4), in the plans' order. */
const SCOPE_MODULES: readonly ModuleName[] = [
  'oidcc-scope-profile',
  'oidcc-scope-email',
  'oidcc-scope-address',
  'oidcc-scope-phone',
  'oidcc-scope-all',
];

/** The authorization request's parameters every plan sends (Core §3.1.2.1), in the plans' order. */
const REQUEST_PARAMETER_MODULES: readonly ModuleName[] = [
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
];

/** The unsigned request object modules (Core §6), by value and by reference. */
const REQUEST_OBJECT_MODULES: readonly ModuleName[] = [
  'oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported',
  'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported',
];

/** What sets apart the list of a response type that returns a code. */
interface CodeFlowList {
  /** The response type's nonce module. */
  nonce: ModuleName;
  /** Whether the modules that are the same for every response type run here (once per plan). */
  once: boolean;
  /** Whether this is the Basic plan, with its two modules of its own. */
  basic?: boolean;
}

/** The list of the Basic plan, or of the Hybrid plan for one response type. */
function codeFlowModules({ nonce, once, basic = false }: CodeFlowList): ModuleName[] {
  const onlyIf = (condition: boolean, ...names: ModuleName[]): ModuleName[] => (condition ? names : []);
  return [
    'oidcc-server',
    ...onlyIf(once, 'oidcc-response-type-missing'),
    'oidcc-idtoken-signature',
    ...onlyIf(basic, 'oidcc-idtoken-unsigned'),
    ...USERINFO_MODULES,
    nonce,
    ...SCOPE_MODULES,
    ...onlyIf(once, 'oidcc-ensure-other-scope-order-succeeds'),
    ...REQUEST_PARAMETER_MODULES,
    'oidcc-codereuse',
    'oidcc-codereuse-30seconds',
    'oidcc-ensure-registered-redirect-uri',
    ...onlyIf(basic, 'oidcc-ensure-post-request-succeeds'),
    // The plan runs this one with client_secret_post.
    'oidcc-server-client-secret-post',
    ...REQUEST_OBJECT_MODULES,
    'oidcc-claims-essential',
    'oidcc-ensure-request-object-with-redirect-uri',
    'oidcc-refresh-token',
    ...onlyIf(once, 'oidcc-ensure-request-with-valid-pkce-succeeds'),
  ];
}

/** oidcc-basic-certification-test-plan: response_type=code, client_secret_basic. */
export const BASIC_PLAN: readonly PlanEntry[] = [
  {
    variant: variant('code'),
    modules: codeFlowModules({
      nonce: 'oidcc-ensure-request-without-nonce-succeeds-for-code-flow',
      once: true,
      basic: true,
    }),
  },
];

/** The Implicit plan's list, run for id_token and for id_token token. */
const IMPLICIT_MODULES: readonly ModuleName[] = [
  'oidcc-server',
  'oidcc-idtoken-signature',
  'oidcc-ensure-request-without-nonce-fails',
  ...SCOPE_MODULES,
  'oidcc-ensure-other-scope-order-succeeds',
  ...REQUEST_PARAMETER_MODULES,
  'oidcc-ensure-registered-redirect-uri',
  ...REQUEST_OBJECT_MODULES,
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
      ...USERINFO_MODULES,
      'oidcc-response-type-missing',
    ],
  },
];

/** oidcc-hybrid-certification-test-plan: code id_token, code token, code id_token token. */
export const HYBRID_PLAN: readonly PlanEntry[] = [
  {
    variant: variant('code id_token'),
    modules: codeFlowModules({ nonce: 'oidcc-ensure-request-without-nonce-fails', once: true }),
  },
  {
    variant: variant('code token'),
    modules: codeFlowModules({
      nonce: 'oidcc-ensure-request-without-nonce-succeeds-for-code-flow',
      once: false,
    }),
  },
  {
    variant: variant('code id_token token'),
    modules: codeFlowModules({ nonce: 'oidcc-ensure-request-without-nonce-fails', once: false }),
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
