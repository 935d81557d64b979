import type { GatehouseConfig, RateLimitedEndpoint } from '../config.js';

/**
 * The endpoint table: every route Gatehouse serves, declared once (docs/decisions.md, decision 31).
 * The routes are registered at these paths, both metadata documents list the members named here,
 * the engine's own endpoint URLs (the audiences of client assertions and DPoP proofs) are built from
 * them, and the request rate limits count what they say. A route Fastify serves that is not here, or
 * a method of it without a decision, stops the server at start-up (undeclared-routes.ts).
 */

/** What a request to one method of an endpoint counts against (docs/limits.md). */
export type LimitDecision =
  /** The per-window request rate limits of that name (GATEHOUSE_RATE_LIMIT_*; rate-limit.ts counts). */
  | { readonly bucket: RateLimitedEndpoint }
  /** A limit of its own, counted where the route is registered: the text says which and where. */
  | { readonly ownLimit: string }
  /** No request rate limit: the text says why none is needed. */
  | { readonly unlimited: string };

/**
 * The methods an endpoint answers, each with its decision. A GET's decision also covers the HEAD
 * route Fastify adds beside it; `*` is every method (a surface that answers every one itself).
 */
export type DeclaredMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';

/** The settings that turn endpoints on and off. */
export type EndpointSettings = Pick<GatehouseConfig, 'dynamicRegistration'>;

/** Which metadata documents name an endpoint. */
export type MetadataDocuments =
  /** RFC 8414 §2's member: in /.well-known/oauth-authorization-server and in OpenID Connect Discovery's. */
  | 'both'
  /** A member OpenID Connect defines: in /.well-known/openid-configuration only. */
  | 'openid-only';

export interface Endpoint {
  /**
   * Its path under the issuer, that is under the base path the routes are mounted at; for a well-known
   * endpoint (`wellKnown`), that prefix followed by the path under the issuer of what it describes.
   */
  readonly path: string;
  /**
   * A well-known URI's prefix (RFC 8615 §3), which lives at the origin's root: RFC 9728 §3.1 inserts it
   * between the host and the path of the resource described, so the route is this prefix, then the base
   * path, then the rest of `path`, outside the base path (routePath), and its URL the issuer's origin,
   * this prefix, the issuer's path and the rest (endpointUrl). Decision 47.
   */
  readonly wellKnown?: string;
  /** Also every path below it (a surface with routes of its own: /v1, the assets). */
  readonly subtree?: true;
  readonly methods: Readonly<Partial<Record<DeclaredMethod, LimitDecision>>>;
  /** Its member in the metadata documents, whose value is its URL. */
  readonly metadata?: { readonly member: string; readonly documents: MetadataDocuments };
  /** Whether it is served with these settings; always when absent. */
  readonly on?: (settings: EndpointSettings) => boolean;
}

const bucket = (name: RateLimitedEndpoint): LimitDecision => ({ bucket: name });
const unlimited = (why: string): LimitDecision => ({ unlimited: why });

/** The 405 answers of a POST-only endpoint: refused before the request is read. */
const METHOD_NOT_ALLOWED = unlimited('answered 405 with Allow: POST before anything is read');

/** RFC 7591 §3 and RFC 7592 §2: served while GATEHOUSE_DYNAMIC_REGISTRATION is not `off` (decision 20). */
const registrationOn = (settings: EndpointSettings) => settings.dynamicRegistration !== 'off';

/**
 * Every endpoint. The ones with a metadata member come first, in the order the metadata documents
 * list them (the documents' bytes depend on it).
 */
export const ENDPOINTS = {
  token: {
    path: '/token',
    methods: { POST: bucket('token') },
    metadata: { member: 'token_endpoint', documents: 'both' },
  },
  jwks: {
    path: '/jwks',
    methods: { GET: unlimited('the public keys, the same for everyone and answered from memory') },
    metadata: { member: 'jwks_uri', documents: 'both' },
  },
  introspection: {
    path: '/introspect',
    methods: { POST: bucket('introspect') },
    metadata: { member: 'introspection_endpoint', documents: 'both' },
  },
  revocation: {
    path: '/revoke',
    methods: { POST: bucket('revoke') },
    metadata: { member: 'revocation_endpoint', documents: 'both' },
  },
  authorization: {
    path: '/authorize',
    methods: {
      GET: bucket('authorize'),
      // OpenID Connect Core §3.1.2.1: a POST is sent on to GET (303), where it is counted.
      POST: unlimited('only redirects to GET /authorize, which is counted'),
    },
    metadata: { member: 'authorization_endpoint', documents: 'both' },
  },
  registration: {
    path: '/register',
    methods: {
      POST: {
        ownLimit:
          'GATEHOUSE_DYNAMIC_REGISTRATION_RATE_LIMIT per address per hour, counted before the body is read (registration-routes.ts, decision 20)',
      },
    },
    // RFC 8414 §2: advertised only while registration is on.
    metadata: { member: 'registration_endpoint', documents: 'both' },
    on: registrationOn,
  },
  pushedAuthorizationRequest: {
    // RFC 9126 §2: a client-authenticated request like the token endpoint's, counted with them.
    path: '/par',
    methods: {
      POST: bucket('token'),
      GET: METHOD_NOT_ALLOWED,
      PUT: METHOD_NOT_ALLOWED,
      PATCH: METHOD_NOT_ALLOWED,
      DELETE: METHOD_NOT_ALLOWED,
    },
    metadata: { member: 'pushed_authorization_request_endpoint', documents: 'both' },
  },
  deviceAuthorization: {
    // RFC 8628 §3.1: client-authenticated like the token endpoint's requests, counted with them.
    path: '/device_authorization',
    methods: {
      POST: bucket('token'),
      GET: METHOD_NOT_ALLOWED,
      PUT: METHOD_NOT_ALLOWED,
      PATCH: METHOD_NOT_ALLOWED,
      DELETE: METHOD_NOT_ALLOWED,
    },
    metadata: { member: 'device_authorization_endpoint', documents: 'both' },
  },
  userInfo: {
    // OpenID Connect Core §5.3.1: GET and POST, one allowance.
    path: '/userinfo',
    methods: { GET: bucket('userinfo'), POST: bucket('userinfo') },
    metadata: { member: 'userinfo_endpoint', documents: 'openid-only' },
  },
  endSession: {
    // RP-Initiated Logout 1.0 §2 (GET and POST), one allowance with its confirmation below.
    path: '/logout',
    methods: { GET: bucket('logout'), POST: bucket('logout') },
    metadata: { member: 'end_session_endpoint', documents: 'openid-only' },
  },
  endSessionConfirmation: {
    path: '/logout/confirm',
    methods: { POST: bucket('logout') },
  },
  registrationConfiguration: {
    // RFC 7592 §2: the client configuration endpoint.
    path: '/register/:id',
    methods: {
      GET: unlimited("needs the client's registration access token"),
      PUT: unlimited("needs the client's registration access token"),
      DELETE: unlimited("needs the client's registration access token"),
    },
    on: registrationOn,
  },
  authorizationServerMetadata: {
    // RFC 8414 §3.
    path: '/.well-known/oauth-authorization-server',
    methods: { GET: unlimited('the same document for everyone, cacheable for a minute') },
  },
  openIdConfiguration: {
    // OpenID Connect Discovery §4.
    path: '/.well-known/openid-configuration',
    methods: { GET: unlimited('the same document for everyone, cacheable for a minute') },
  },
  signIn: {
    path: '/sign-in',
    methods: {
      GET: unlimited('the form; checks nothing'),
      // A password guess per request, counted per address (the lockout counts failures too, decision 8).
      POST: bucket('signIn'),
    },
  },
  // Passkeys (docs/decisions.md, decision 33). Options store a challenge per request; answers are
  // sign-in attempts under the lockout (decision 30): both count like a password guess.
  passkeySignInOptions: {
    path: '/sign-in/passkey/options',
    methods: { POST: bucket('signIn') },
  },
  passkeySignIn: {
    path: '/sign-in/passkey',
    methods: { POST: bucket('signIn') },
  },
  passkeySecondFactorOptions: {
    path: '/sign-in/passkey/second-factor/options',
    methods: { POST: bucket('signIn') },
  },
  passkeySecondFactor: {
    path: '/sign-in/passkey/second-factor',
    methods: { POST: bucket('signIn') },
  },
  // Decision 37: a signed-in person confirming who they are with one of their own passkeys.
  passkeyReauthenticationOptions: {
    path: '/sign-in/passkey/reauthentication/options',
    methods: { POST: bucket('signIn') },
  },
  passkeyReauthentication: {
    path: '/sign-in/passkey/reauthentication',
    methods: { POST: bucket('signIn') },
  },
  // Upstream identity providers (decision 40): the start sends the browser upstream (one stored-state
  // cookie, one discovery at most per provider and minute); the callback redeems a code upstream and may
  // create a user, so both count like a sign-in.
  signInUpstream: {
    path: '/sign-in/upstream/:id',
    methods: { GET: bucket('signIn') },
  },
  signInCallback: {
    path: '/sign-in/callback/:id',
    methods: { GET: bucket('signIn') },
  },
  signInPendingLinkCancel: {
    // Decision 40: "Don't link" on the sign-in page of a pending link: clears this browser's cookie.
    path: '/sign-in/pending-link/cancel',
    methods: { POST: unlimited("clears the browser's own pending-link cookie (CSRF-checked)") },
  },
  signInContinuation: {
    // OpenID Connect Core §3.1.2.1, prompt=select_account: continue as the account signed in.
    path: '/sign-in/continue',
    methods: {
      POST: unlimited('checks no password: continues as the session already signed in (CSRF-checked)'),
    },
  },
  // Decision 34: the step after a correct password. Reached only with the signed pending-sign-in cookie.
  signInSecondFactor: {
    path: '/sign-in/second-factor',
    methods: {
      GET: unlimited('the form; checks nothing'),
      // A code guess per request, counted per address; wrong codes count toward the lockout (decision 8).
      POST: bucket('signIn'),
    },
  },
  signInSecondFactorSetUp: {
    path: '/sign-in/second-factor/set-up',
    methods: {
      GET: unlimited('needs a correct password (the pending-sign-in cookie); draws a new secret'),
      POST: bucket('signIn'),
    },
  },
  signOut: {
    path: '/sign-out',
    methods: { POST: unlimited("ends the browser's own session (CSRF-checked)") },
  },
  consent: {
    path: '/consent',
    methods: {
      POST: unlimited('answers a request GET /authorize counted, for the session signed in (CSRF-checked)'),
    },
  },
  deviceVerification: {
    // RFC 8628 §3.3: the verification page.
    path: '/device',
    methods: {
      GET: unlimited('the form; checks nothing'),
      // A guess at a user code per request, counted per address like a password (§5.1; its wrong codes
      // are throttled too).
      POST: bucket('signIn'),
    },
  },
  deviceConsent: {
    path: '/device/consent',
    methods: {
      GET: unlimited('needs a user code already entered at POST /device, which is counted'),
      POST: unlimited('needs a user code already entered at POST /device, which is counted'),
    },
  },
  connectedApps: {
    path: '/account/apps',
    methods: { GET: unlimited("the signed-in user's own page") },
  },
  connectedAppRevocation: {
    path: '/account/apps/:clientId/revoke',
    methods: { POST: unlimited("the signed-in user's own grant (CSRF-checked)") },
  },
  accountSecurity: {
    path: '/account/security',
    methods: { GET: unlimited("the signed-in user's own page") },
  },
  accountPasskeyOptions: {
    path: '/account/security/passkeys/options',
    methods: { POST: unlimited('the signed-in user’s own ceremony, after a recent sign-in (CSRF-checked)') },
  },
  accountPasskeys: {
    path: '/account/security/passkeys',
    methods: { POST: unlimited('the signed-in user’s own passkey, after a recent sign-in (CSRF-checked)') },
  },
  accountPasskeyRemoval: {
    path: '/account/security/passkeys/remove',
    methods: { POST: unlimited('the signed-in user’s own passkey, after a recent sign-in (CSRF-checked)') },
  },
  // Decision 40: the security page's linked accounts ("Link NAME" is the sign-in's start, with link=1).
  accountLinkedAccountRemoval: {
    path: '/account/security/linked-accounts/remove',
    methods: { POST: unlimited('the signed-in user’s own link, after a recent sign-in (CSRF-checked)') },
  },
  // Decision 35: recovery and email verification by mail.
  forgotPassword: {
    path: '/forgot-password',
    methods: {
      GET: unlimited('the form; checks nothing'),
      // Each request may send mail: counted per address like a sign-in; mails per user are capped
      // in the store too (core/users/account-mail.ts).
      POST: bucket('signIn'),
    },
  },
  passwordReset: {
    path: '/password-reset',
    methods: {
      GET: unlimited('looks up a 256-bit link token by its hash: guessing one is hopeless'),
      // Hashes the new password (argon2id): counted per address like a sign-in.
      POST: bucket('signIn'),
    },
  },
  emailVerification: {
    path: '/email-verification',
    methods: {
      GET: unlimited('looks up a 256-bit link token by its hash: guessing one is hopeless'),
      POST: bucket('signIn'),
    },
  },
  emailVerificationRequest: {
    path: '/account/security/email/verify',
    methods: {
      POST: {
        ownLimit:
          "the signed-in user's own address (CSRF-checked); at most 5 mails per user per hour, counted in the store (core/users/account-mail.ts)",
      },
    },
  },
  // Decision 34: the authenticator app and the recovery codes of the signed-in user (recent sign-in).
  authenticatorAppSetUp: {
    path: '/account/security/authenticator-app/set-up',
    methods: {
      GET: unlimited("the signed-in user's own set-up, after a recent sign-in"),
      POST: bucket('signIn'),
    },
  },
  authenticatorAppRemoval: {
    path: '/account/security/authenticator-app/remove',
    methods: { POST: unlimited("the signed-in user's own change, after a recent sign-in (CSRF-checked)") },
  },
  recoveryCodesGeneration: {
    path: '/account/security/recovery-codes/generate',
    methods: { POST: unlimited("the signed-in user's own change, after a recent sign-in (CSRF-checked)") },
  },
  accountPassword: {
    // Decision 37: "Change password"; the current password is a guess like a sign-in's (decision 8).
    path: '/account/security/password',
    methods: { POST: bucket('signIn') },
  },
  accountSessionSignOut: {
    path: '/account/security/sessions/sign-out',
    methods: { POST: unlimited("ends one of the signed-in user's own sessions (CSRF-checked)") },
  },
  accountSessionsSignOutOthers: {
    path: '/account/security/sessions/sign-out-others',
    methods: { POST: unlimited("ends the signed-in user's other sessions (CSRF-checked)") },
  },
  playground: {
    path: '/playground',
    methods: { GET: unlimited('a page; its requests go to the endpoints above') },
  },
  playgroundCallback: {
    path: '/playground/callback',
    methods: { GET: unlimited('a page; its requests go to the endpoints above') },
  },
  adminConsole: {
    // Decision 42: the console's pages and forms; every action is a /v1 request made with the signed-in
    // administrator's own token, and /v1 checks it. The callback redeems a code at /token in process,
    // where the token bucket counts it.
    path: '/admin',
    subtree: true,
    methods: {
      GET: unlimited('pages for a signed-in administrator; each reads through /v1, which checks the token'),
      POST: unlimited(
        'CSRF-checked forms of a signed-in administrator; each is a /v1 request, which checks the token',
      ),
    },
  },
  home: {
    path: '/',
    methods: { GET: unlimited('a page that reads nothing') },
  },
  assets: {
    path: '/assets',
    subtree: true,
    methods: { GET: unlimited('the pages’ CSS and scripts, from memory') },
  },
  liveness: {
    path: '/healthz',
    methods: { GET: unlimited('a probe, answered without the store') },
  },
  readiness: {
    path: '/readyz',
    methods: { GET: unlimited('a probe a load balancer calls often; one ping of the store') },
  },
  metrics: {
    path: '/metrics',
    methods: {
      GET: unlimited(
        'for a scraper: needs GATEHOUSE_METRICS_TOKEN, or comes from this machine (docs/deployment.md)',
      ),
    },
  },
  managementApiMetadata: {
    // RFC 9728 §3.1 (decision 47): /v1's protected resource metadata, for the resource `<issuer>/v1`.
    path: '/.well-known/oauth-protected-resource/v1',
    wellKnown: '/.well-known/oauth-protected-resource',
    methods: { GET: unlimited('the same document for everyone, cacheable for a minute') },
  },
  managementApi: {
    // docs/api.md: its own surface, mounted here; it answers every method (405 for those it does not serve).
    path: '/v1',
    subtree: true,
    methods: { '*': unlimited('every request needs an access token the engine checks (docs/api.md)') },
  },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof ENDPOINTS;

/** The table's rows, in its order. */
export function endpoints(): readonly Endpoint[] {
  return Object.values(ENDPOINTS);
}

export function isOn(endpoint: Endpoint, settings: EndpointSettings): boolean {
  return endpoint.on === undefined || endpoint.on(settings);
}

/**
 * An endpoint's URL under the issuer, which includes any base path; `params` fills the path's `:name`
 * segments (percent-encoded), so that core never writes a path of its own (decision 31). A well-known
 * endpoint's is at the issuer's origin, its prefix before the issuer's path (RFC 9728 §3.1).
 */
export function endpointUrl(
  issuer: string,
  endpoint: Endpoint,
  params: Readonly<Record<string, string>> = {},
): string {
  const path = endpoint.path.replace(/:([A-Za-z]+)/g, (segment, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`endpointUrl: no value for ${segment} in ${endpoint.path}`);
    return encodeURIComponent(value);
  });
  if (endpoint.wellKnown !== undefined) {
    const url = new URL(issuer);
    const issuerPath = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    return `${url.origin}${endpoint.wellKnown}${issuerPath}${path.slice(endpoint.wellKnown.length)}`;
  }
  return `${issuer}${path}`;
}

/**
 * The path an endpoint's route is registered at: the base path and its path, or for a well-known
 * endpoint its prefix, the base path and the rest of its path (RFC 9728 §3.1; decision 47).
 */
export function routePath(endpoint: Endpoint, basePath: string): string {
  if (endpoint.wellKnown === undefined) return `${basePath}${endpoint.path}`;
  return `${endpoint.wellKnown}${basePath}${endpoint.path.slice(endpoint.wellKnown.length)}`;
}

/**
 * The table path of a well-known route (`routePath`'s inverse): its URL without the base path after the
 * prefix. Undefined for a URL that is no well-known endpoint's route.
 */
export function wellKnownTablePath(url: string, basePath: string): string | undefined {
  for (const endpoint of endpoints()) {
    if (endpoint.wellKnown !== undefined && url === routePath(endpoint, basePath)) return endpoint.path;
  }
  return undefined;
}

/**
 * The endpoint members of a metadata document, in the table's order: RFC 8414 §2's (`both`), or the
 * ones OpenID Connect Discovery §3 adds (`openid-only`). Endpoints that are off are left out.
 */
export function metadataEndpoints(
  issuer: string,
  settings: EndpointSettings,
  documents: MetadataDocuments,
): Record<string, string> {
  const members: Record<string, string> = {};
  for (const endpoint of endpoints()) {
    if (endpoint.metadata?.documents !== documents || !isOn(endpoint, settings)) continue;
    members[endpoint.metadata.member] = endpointUrl(issuer, endpoint);
  }
  return members;
}

/**
 * The routes the request rate limits count, `METHOD <base path><path>`, and the bucket of each. A
 * GET's HEAD counts with it: Fastify answers it with the GET's handler, which does all the GET does.
 */
export function rateLimitedRoutes(basePath: string): Map<string, RateLimitedEndpoint> {
  const routes = new Map<string, RateLimitedEndpoint>();
  for (const endpoint of endpoints()) {
    for (const [method, decision] of Object.entries(endpoint.methods)) {
      if (!('bucket' in decision)) continue;
      routes.set(`${method} ${routePath(endpoint, basePath)}`, decision.bucket);
      if (method === 'GET') routes.set(`HEAD ${routePath(endpoint, basePath)}`, decision.bucket);
    }
  }
  return routes;
}

/**
 * The decision for a method of a path (without the base path), undefined when the table has none. A
 * HEAD is Fastify's beside a GET and runs its handler: the GET's decision covers it.
 */
export function limitDecision(method: string, path: string): LimitDecision | undefined {
  const declared = method === 'HEAD' ? 'GET' : method;
  for (const endpoint of endpoints()) {
    const matches =
      endpoint.path === path || (endpoint.subtree === true && path.startsWith(`${endpoint.path}/`));
    if (!matches) continue;
    const methods: Partial<Record<string, LimitDecision>> = endpoint.methods;
    return methods[declared] ?? methods['*'];
  }
  return undefined;
}
