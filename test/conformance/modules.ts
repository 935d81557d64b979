import assert from 'node:assert/strict';
import {
  authorizationRequest,
  authorizeUrl,
  checkErrorResponse,
  checkIdToken,
  checkTokenError,
  checkTokenResponse,
  checkUserInfo,
  checkUserInfoRefused,
  entropyBits,
  errorParams,
  ISSUER,
  jwks,
  leftHalfHash,
  longState,
  newUserAgent,
  newUser,
  parts,
  pkcePair,
  randomValue,
  REDIRECT_URI,
  redirectParams,
  responseParams,
  serverFlow,
  tokenRequest,
  userInfo,
  type FlowResult,
  type IdToken,
  type Op,
  type UserAgent,
  type Variant,
} from '../helpers/conformance-variants.js';

// One function per module of the OpenID Foundation's conformance suite that the Basic, Implicit,
// Hybrid and Form Post OP plans run, named by the module's test name. Each checks what that
// module's conditions check, as the specifications say it; where Gatehouse does not implement what a
// module exercises, the function checks what the module expects of a provider that does not (its skip
// condition, or the error it accepts). docs/conformance.md maps them.

export type Module = (op: Op, variant: Variant) => Promise<void>;

/**
 * Runs `body` with a new user's browser, closed afterwards whatever happens: the form agent, which
 * sends Gatehouse what a browser sends for the same clicks (form-agent.ts). What only a browser shows
 * (the pages' scripts run under their policy, the response taken to the relying party as a browser
 * takes it: the fragment kept across the redirect, the form_post page posting itself) is checked in
 * Chromium by each variant's oidcc-server and by oidcc-ensure-post-request-succeeds (withBrowser).
 */
async function withAgent<T>(op: Op, body: (agent: UserAgent) => Promise<T>): Promise<T> {
  return run(await newUserAgent(op), body);
}

/**
 * Runs `body` with a new Chromium profile (the form agent on all but one store: see newUserAgent),
 * closed afterwards whatever happens.
 */
async function withBrowser<T>(op: Op, body: (agent: UserAgent) => Promise<T>): Promise<T> {
  return run(await newUserAgent(op, 'browser'), body);
}

async function run<T>(agent: UserAgent, body: (agent: UserAgent) => Promise<T>): Promise<T> {
  try {
    return await body(agent);
  } finally {
    await agent.close();
  }
}

/**
 * Whether Gatehouse remembers a consent for this response type: not for those that hand out an access
 * token at the authorization endpoint (docs/decisions.md, decision 10). prompt=none is then answered
 * interaction_required, a refusal Core §3.1.2.6 allows, though the modules that expect a silent
 * success cannot pass.
 */
export const remembersConsent = (variant: Variant): boolean => !parts(variant.responseType).token;

/** The discovery document (Discovery §4). */
async function discovery(op: Op): Promise<Record<string, unknown>> {
  const res = await op.server.http.request('/.well-known/openid-configuration');
  assert.equal(res.status, 200);
  return res.json as Record<string, unknown>;
}

/** Core §3.1.2.6: the errors that mean the user had to be shown a page (CheckErrorFromAuthorizationEndpointIsOneThatRequiredAUserInterface). */
const USER_INTERFACE_ERRORS = [
  'login_required',
  'interaction_required',
  'consent_required',
  'account_selection_required',
];

/** The authorization endpoint's answer to a request no user sees (HTTPS, no cookie). */
function requestWithoutUser(op: Op, params: Record<string, string>) {
  return op.server.http.request(`/authorize?${new URLSearchParams(params).toString()}`);
}

/** The flow, then the same sub from UserInfo as in every ID token of the flow (Core §5.3.2). */
async function userInfoModule(
  op: Op,
  variant: Variant,
  how: 'get' | 'post-header' | 'post-body',
): Promise<void> {
  await withAgent(op, async (agent) => {
    const flow = await serverFlow(op, variant, { agent });
    assert.ok(flow.accessToken, 'an access token for UserInfo');
    const res = await userInfo(op, flow.accessToken, how);
    const claims = checkUserInfo(op, res);
    assert.equal(res.headers['cache-control'], 'no-store');
    for (const idToken of [flow.authorizationIdToken, flow.tokenIdToken]) {
      if (idToken) assert.equal(claims.sub, idToken.claims.sub, 'Core §5.3.2: the sub of the ID token');
    }
  });
}

/**
 * The scope modules (AbstractOIDCCScopesServerTest, AbstractOIDCCReturnedClaimsServerTest): the flow
 * with `scope`; then, where an access token came, UserInfo's claims of their types with the ID tokens'
 * sub; where none did (response_type=id_token), the claims in the ID token itself (Core §5.4). Core
 * §5.4 names every claim a scope asks for; the modules only warn when some are missing. Gatehouse has
 * the ones listed in SCOPE_CLAIMS, and those must all come.
 */
async function scopeModule(op: Op, variant: Variant, scope: string, released: string[]): Promise<void> {
  const supported = (await discovery(op)).scopes_supported as string[];
  for (const name of scope.split(' ')) assert.ok(supported.includes(name), `scopes_supported lists ${name}`);
  await withAgent(op, async (agent) => {
    const flow = await serverFlow(op, variant, { agent, scope });
    let claims: Record<string, unknown>;
    if (flow.accessToken !== undefined) {
      claims = checkUserInfo(op, await userInfo(op, flow.accessToken));
      for (const idToken of [flow.authorizationIdToken, flow.tokenIdToken]) {
        if (idToken) assert.equal(claims.sub, idToken.claims.sub, 'Core §5.3.2: the sub of the ID token');
      }
    } else {
      claims = flow.idToken.claims;
    }
    for (const name of released) assert.ok(name in claims, `Core §5.4: ${scope} releases ${name}`);
    assert.equal(claims.email_verified ?? false, false, 'Gatehouse never verifies an address');
  });
}

/**
 * A scope Gatehouse does not support (address, phone): the module is skipped when scopes_supported
 * does not list it (OIDCCCheckScopesSupportedContainScopeTest), which is what this checks.
 */
async function unsupportedScopeModule(op: Op, scope: string): Promise<void> {
  const supported = (await discovery(op)).scopes_supported as string[];
  const missing = scope.split(' ').filter((name) => !supported.includes(name));
  assert.ok(missing.length > 0, `the module runs only when scopes_supported lacks one of ${scope}`);
  assert.ok(
    missing.every((name) => ['address', 'phone'].includes(name)),
    `only address and phone are missing`,
  );
}

/** The flow with extra parameters that must not make it fail (Core §15.1; RFC 6749 §3.1). */
async function succeedsWith(op: Op, variant: Variant, extra: Record<string, string>): Promise<FlowResult> {
  return withAgent(op, async (agent) => {
    const flow = await serverFlow(op, variant, { agent, extra });
    assert.ok(flow.outcome.pages.includes('sign-in'), 'a new browser signs in');
    return flow;
  });
}

/** AbstractOIDCCSameAuthTwiceServerTest's checks: the same sub and auth_time from both sign-ins. */
function sameAuthentication(first: IdToken, second: IdToken): void {
  assert.equal(second.claims.sub, first.claims.sub, 'Core §2: the same sub for the same user');
  assert.equal(second.claims.auth_time, first.claims.auth_time, 'Core §2: auth_time of the same sign-in');
}

/**
 * A second authorization in the same browser with prompt=none (and more): the answer at once, no page
 * (Core §3.1.2.1); for the response types whose consent Gatehouse never remembers, interaction_required
 * (see remembersConsent).
 */
async function silentSecondAuthorization(
  op: Op,
  variant: Variant,
  extra: (first: FlowResult) => Record<string, string>,
): Promise<void> {
  await withAgent(op, async (agent) => {
    const first = await serverFlow(op, variant, { agent });
    op.server.clock.advance(5);
    if (!remembersConsent(variant)) {
      const request = authorizationRequest(op, { variant, extra: { prompt: 'none', ...extra(first) } });
      const outcome = await agent.browse(authorizeUrl(op, request.params));
      assert.deepEqual(outcome.pages, [], 'Core §3.1.2.1: prompt=none shows no page');
      checkErrorResponse(responseParams(outcome, variant), request.state, ['interaction_required']);
      return;
    }
    const second = await serverFlow(op, variant, {
      agent,
      user: first.user,
      extra: { prompt: 'none', ...extra(first) },
    });
    assert.deepEqual(second.outcome.pages, [], 'Core §3.1.2.1: prompt=none shows no page');
    sameAuthentication(first.idToken, second.idToken);
  });
}

/** A request object without a signature (alg none, JAR §10.1 / Core §6.1), carrying `claims`. */
function unsignedRequestObject(claims: Record<string, unknown>): string {
  const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
}

/**
 * The request object modules' request (AbstractBuildRequestObjectRedirectToAuthorizationEndpoint):
 * the whole request in the object, response_type, client_id, scope and redirect_uri also as
 * parameters (Core §6.1), state and nonce in the object only.
 */
function requestObjectParams(
  op: Op,
  variant: Variant,
  name: 'request' | 'request_uri',
  queryRedirect?: string,
) {
  const request = authorizationRequest(op, { variant });
  const object = { ...request.params, iss: request.rp.client.id, aud: ISSUER };
  const value = name === 'request' ? unsignedRequestObject(object) : 'https://rp.test/request.jwt';
  const params: Record<string, string> = {
    [name]: value,
    response_type: variant.responseType,
    client_id: request.rp.client.id,
    scope: 'openid',
    redirect_uri: queryRedirect ?? REDIRECT_URI,
    ...(variant.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
  };
  return params;
}

/** The code reuse modules (AbstractOIDCCAuthCodeReuse): the flow, then the code once more. */
async function reuseCode(op: Op, variant: Variant, wait: number): Promise<void> {
  await withAgent(op, async (agent) => {
    const flow = await serverFlow(op, variant, { agent });
    op.server.clock.advance(wait);
    const again = await tokenRequest(op, flow.request.rp, {
      grant_type: 'authorization_code',
      code: flow.params.get('code') ?? '',
      redirect_uri: REDIRECT_URI,
    });
    // RFC 6749 §5.2; Core §3.1.3.4: 400 invalid_grant, JSON.
    checkTokenError(again, 'invalid_grant');
    // RFC 6749 §4.1.2: the tokens issued from the code SHOULD be revoked; Gatehouse revokes the grant,
    // so the access tokens of both endpoints stop working (the module warns otherwise).
    if (wait > 0) {
      for (const token of [flow.tokens?.access_token, flow.authorizationAccessToken]) {
        if (token !== undefined) await checkUserInfoRefused(op, token);
      }
    }
  });
}

export const MODULES = {
  /**
   * OIDCCServerTest: the happy flow of the variant, everything checked (serverFlow), in Chromium: the
   * pages as a person meets them and the response delivered as a browser delivers it.
   */
  'oidcc-server': async (op, variant) => {
    await withBrowser(op, (agent) => serverFlow(op, variant, { agent }));
  },

  /**
   * OIDCCResponseTypeMissing: no response_type. RFC 6749 §3.1.1, §4.1.2.1: invalid_request (or
   * unsupported_response_type) by redirect, in the query, as no response type says otherwise; or an
   * error page. Gatehouse redirects.
   */
  'oidcc-response-type-missing': async (op, variant) => {
    const request = authorizationRequest(op, { variant });
    delete request.params.response_type;
    const params = redirectParams(await requestWithoutUser(op, request.params), 'query');
    checkErrorResponse(params, request.state, ['invalid_request', 'unsupported_response_type']);
  },

  /**
   * OIDCCIdTokenSignature (dynamic clients only in the suite): a client that registered no algorithm
   * gets RS256 ID tokens (Core §15.1; Registration §2) with a kid (Core §10.1).
   */
  'oidcc-idtoken-signature': async (op, variant) => {
    assert.equal(op.rp.client.idTokenSignedResponseAlg, 'RS256');
    await withAgent(op, async (agent) => {
      const flow = await serverFlow(op, variant, { agent });
      for (const idToken of [flow.authorizationIdToken, flow.tokenIdToken]) {
        if (!idToken) continue;
        assert.equal(idToken.header.alg, 'RS256');
        const key = (await jwks(op)).keys.find((candidate) => candidate.kid === idToken.header.kid);
        assert.equal(key?.kty, 'RSA');
      }
    });
  },

  /**
   * OIDCCIdTokenUnsigned: ID tokens with alg none. Gatehouse signs every ID token; the module is
   * skipped when id_token_signing_alg_values_supported lacks none, and a client cannot register none.
   */
  'oidcc-idtoken-unsigned': async (op) => {
    const algs = (await discovery(op)).id_token_signing_alg_values_supported as string[];
    assert.ok(!algs.includes('none'), 'none is not offered');
    await assert.rejects(
      op.server.client({
        name: 'unsigned',
        redirect_uris: [REDIRECT_URI],
        id_token_signed_response_alg: 'none',
      }),
    );
  },

  /** OIDCCUserInfoGet: UserInfo by GET with the bearer header (Core §5.3.1). */
  'oidcc-userinfo-get': (op, variant) => userInfoModule(op, variant, 'get'),
  /** OIDCCUserInfoPostHeader: UserInfo by POST with the bearer header (Core §5.3.1). */
  'oidcc-userinfo-post-header': (op, variant) => userInfoModule(op, variant, 'post-header'),
  /**
   * OIDCCUserInfoPostBody: UserInfo by POST with the token in the form (RFC 6750 §2.2); optional for
   * providers (the module warns), supported by Gatehouse.
   */
  'oidcc-userinfo-post-body': (op, variant) => userInfoModule(op, variant, 'post-body'),

  /**
   * OIDCCEnsureRequestWithoutNonceSucceedsForCodeFlow: nonce is optional when no ID token comes from the
   * authorization endpoint (Core §3.1.2.1); the ID token then has none (Core §2).
   */
  'oidcc-ensure-request-without-nonce-succeeds-for-code-flow': async (op, variant) => {
    await withAgent(op, (agent) => serverFlow(op, variant, { agent, nonce: null }));
  },

  /**
   * OIDCCEnsureRequestWithoutNonceFails: nonce is required when the authorization endpoint returns an
   * ID token (Core §3.2.2.1, §3.3.2.11): invalid_request, where the response mode puts it, or a page.
   */
  'oidcc-ensure-request-without-nonce-fails': async (op, variant) => {
    const request = authorizationRequest(op, { variant, nonce: null });
    const params = errorParams(await requestWithoutUser(op, request.params), variant);
    checkErrorResponse(params, request.state, ['invalid_request']);
  },

  /** OIDCCScopeProfile (Core §5.4). */
  'oidcc-scope-profile': (op, variant) =>
    scopeModule(op, variant, 'openid profile', ['name', 'preferred_username', 'updated_at']),
  /** OIDCCScopeEmail (Core §5.4). */
  'oidcc-scope-email': (op, variant) => scopeModule(op, variant, 'openid email', ['email', 'email_verified']),
  /** OIDCCScopeAddress: Gatehouse has no address claim; the module's skip condition holds. */
  'oidcc-scope-address': (op) => unsupportedScopeModule(op, 'openid address'),
  /** OIDCCScopePhone: Gatehouse has no phone claims; the module's skip condition holds. */
  'oidcc-scope-phone': (op) => unsupportedScopeModule(op, 'openid phone'),
  /** OIDCCScopeAll: address and phone are among the scopes; the module's skip condition holds. */
  'oidcc-scope-all': (op) => unsupportedScopeModule(op, 'openid email phone address profile'),
  /** OIDCEnsureOtherScopeOrderSucceeds: scope values in any order (RFC 6749 §3.3). */
  'oidcc-ensure-other-scope-order-succeeds': (op, variant) =>
    scopeModule(op, variant, 'email openid', ['email', 'email_verified']),

  /** OIDCCDisplayPage: display=page must not cause an error (Core §3.1.2.1, §15.1). */
  'oidcc-display-page': async (op, variant) => {
    await succeedsWith(op, variant, { display: 'page' });
  },
  /** OIDCCDisplayPopup: display=popup must not cause an error (Core §3.1.2.1, §15.1). */
  'oidcc-display-popup': async (op, variant) => {
    await succeedsWith(op, variant, { display: 'popup' });
  },

  /**
   * OIDCCPromptLogin: signed in, a second request with prompt=login asks for the password again
   * (Core §3.1.2.1); the second ID token's auth_time differs from the first (CheckIdTokenAuthTimeClaimsDifferIfPresent).
   */
  'oidcc-prompt-login': async (op, variant) => {
    await withAgent(op, async (agent) => {
      const first = await serverFlow(op, variant, { agent });
      op.server.clock.advance(1);
      const second = await serverFlow(op, variant, { agent, user: first.user, extra: { prompt: 'login' } });
      assert.equal(second.outcome.pages[0], 'sign-in', 'Core §3.1.2.1: the user is asked to sign in again');
      assert.equal(second.idToken.claims.sub, first.idToken.claims.sub);
      assert.notEqual(second.idToken.claims.auth_time, first.idToken.claims.auth_time);
    });
  },

  /**
   * OIDCCPromptNoneNotLoggedIn: prompt=none without a sign-in: an error that needs a user interface
   * (Core §3.1.2.6), at the redirect URI in the response mode, a 128-character state returned intact.
   */
  'oidcc-prompt-none-not-logged-in': async (op, variant) => {
    const request = authorizationRequest(op, { variant, state: longState(), extra: { prompt: 'none' } });
    const params = errorParams(await requestWithoutUser(op, request.params), variant);
    checkErrorResponse(params, request.state, USER_INTERFACE_ERRORS);
  },

  /** OIDCCPromptNoneLoggedIn: signed in, prompt=none answers at once with the same sub and auth_time. */
  'oidcc-prompt-none-logged-in': (op, variant) => silentSecondAuthorization(op, variant, () => ({})),

  /**
   * OIDCCMaxAge1: a second request with max_age=1 two seconds after the sign-in asks for the password
   * again (Core §3.1.2.1); its ID token has auth_time (Core §2: required with max_age), later than the
   * first and recent.
   */
  'oidcc-max-age-1': async (op, variant) => {
    await withAgent(op, async (agent) => {
      const first = await serverFlow(op, variant, { agent });
      op.server.clock.advance(2);
      const second = await serverFlow(op, variant, { agent, user: first.user, extra: { max_age: '1' } });
      assert.equal(second.outcome.pages[0], 'sign-in', 'Core §3.1.2.1: an older sign-in is not enough');
      const authTime = second.idToken.claims.auth_time;
      assert.equal(typeof authTime, 'number', 'Core §2: auth_time is required with max_age');
      assert.ok(Number(authTime) > Number(first.idToken.claims.auth_time), 'a later sign-in');
      assert.ok(op.server.clock.now() - Number(authTime) <= 60, 'a recent sign-in');
    });
  },

  /**
   * OIDCCMaxAge10000: a first request with max_age=15000, a second with max_age=10000: no new sign-in
   * (a consent page may come), auth_time present in both, the same, and the same sub.
   */
  'oidcc-max-age-10000': async (op, variant) => {
    await withAgent(op, async (agent) => {
      const first = await serverFlow(op, variant, { agent, extra: { max_age: '15000' } });
      assert.equal(typeof first.idToken.claims.auth_time, 'number', 'Core §2: auth_time with max_age');
      op.server.clock.advance(60);
      const second = await serverFlow(op, variant, { agent, user: first.user, extra: { max_age: '10000' } });
      assert.ok(!second.outcome.pages.includes('sign-in'), 'a recent enough sign-in answers');
      sameAuthentication(first.idToken, second.idToken);
    });
  },

  /** OIDCCEnsureRequestWithUnknownParameterSucceeds: unknown parameters are ignored (RFC 6749 §3.1). */
  'oidcc-ensure-request-with-unknown-parameter-succeeds': async (op, variant) => {
    await succeedsWith(op, variant, { extra: 'foobar' });
  },

  /**
   * OIDCCIdTokenHint: signed in, prompt=none with the first ID token as id_token_hint answers at once
   * (Core §3.1.2.1), the same sub and auth_time.
   */
  'oidcc-id-token-hint': (op, variant) =>
    silentSecondAuthorization(op, variant, (first) => ({ id_token_hint: first.idToken.raw })),

  /**
   * OIDCCLoginHint: login_hint must not cause an error (Core §3.1.2.1); Gatehouse fills in the user
   * name with it.
   */
  'oidcc-login-hint': async (op, variant) => {
    await withAgent(op, async (agent) => {
      const user = await newUser(op);
      await serverFlow(op, variant, {
        agent,
        user,
        extra: { login_hint: user.user.username },
        onSignInPage: (fields) => {
          assert.equal(fields.username, user.user.username);
        },
      });
    });
  },

  /** OIDCCUiLocales: ui_locales must not cause an error (Core §3.1.2.1). */
  'oidcc-ui-locales': async (op, variant) => {
    await succeedsWith(op, variant, { ui_locales: 'se' });
  },
  /** OIDCCClaimsLocales: claims_locales must not cause an error (Core §5.2, §15.1). */
  'oidcc-claims-locales': async (op, variant) => {
    await succeedsWith(op, variant, { claims_locales: 'se' });
  },

  /**
   * OIDCCEnsureRequestWithAcrValuesSucceeds: acr_values must not cause an error (Core §3.1.2.1,
   * §15.1). Values Gatehouse does not know ask nothing it can check (decision 36): the ID token says the
   * acr reached, one of acr_values_supported (the module warns that it is not one of "1 2").
   */
  'oidcc-ensure-request-with-acr-values-succeeds': async (op, variant) => {
    const supported = (await discovery(op)).acr_values_supported as string[];
    const flow = await succeedsWith(op, variant, { acr_values: '1 2' });
    assert.equal(flow.idToken.claims.acr, 'urn:gatehouse:acr:single-factor');
    assert.ok(supported.includes(flow.idToken.claims.acr as string));
  },

  /** OIDCCAuthCodeReuse: a code used twice answers invalid_grant (RFC 6749 §4.1.2, §5.2). */
  'oidcc-codereuse': (op, variant) => reuseCode(op, variant, 0),
  /**
   * OIDCCAuthCodeReuseAfter30Seconds: 30 s later too; and the tokens issued from the code no longer
   * work (RFC 6749 §4.1.2).
   */
  'oidcc-codereuse-30seconds': (op, variant) => reuseCode(op, variant, 30),

  /**
   * OIDCCEnsureRegisteredRedirectUri: an unregistered redirect_uri gets an error page, never a redirect
   * (Core §3.1.2.1; RFC 6749 §3.1.2.4, §4.1.2.1).
   */
  'oidcc-ensure-registered-redirect-uri': async (op, variant) => {
    const request = authorizationRequest(op, { variant, redirectUri: `https://rp.test/${randomValue(6)}` });
    const res = await requestWithoutUser(op, request.params);
    assert.equal(res.status, 400);
    assert.equal(res.headers.location, undefined, 'no redirect');
    assert.match(res.text, /return address \(redirect_uri\) is not one the application registered/);
  },

  /**
   * OIDCCEnsurePostRequestSucceeds: the authorization request as a form POST (Core §3.1.2.1: GET and
   * POST) completes and reaches the redirect URI.
   */
  'oidcc-ensure-post-request-succeeds': async (op, variant) => {
    // In Chromium: the relying party's page posts the request, as a browser form would.
    await withBrowser(op, async (agent) => {
      const flow = await serverFlow(op, variant, { agent, method: 'POST' });
      assert.ok(flow.outcome.pages.includes('sign-in'));
    });
  },

  /** OIDCCServerTestClientSecretPost: the happy flow with client_secret_post (RFC 6749 §2.3.1). */
  'oidcc-server-client-secret-post': async (op, variant) => {
    await withAgent(op, (agent) =>
      serverFlow(op, variant, { agent, rp: op.rpPost, auth: 'client_secret_post' }),
    );
  },

  /**
   * OIDCCRequestUriUnsignedSupportedCorrectlyOrRejectedAsUnsupported: request_uri is not supported
   * (request_uri_parameter_supported false), so request_uri_not_supported (Core §3.1.2.6), by redirect
   * in the response mode; state was only in the object, so none comes back.
   */
  'oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported': async (op, variant) => {
    assert.equal((await discovery(op)).request_uri_parameter_supported, false);
    const res = await requestWithoutUser(op, requestObjectParams(op, variant, 'request_uri'));
    checkErrorResponse(errorParams(res, variant), undefined, ['request_uri_not_supported']);
  },

  /**
   * OIDCCUnsignedRequestObjectSupportedCorrectlyOrRejectedAsUnsupported: request objects are not
   * supported (request_parameter_supported false): request_not_supported (Core §3.1.2.6).
   */
  'oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported': async (op, variant) => {
    assert.equal((await discovery(op)).request_parameter_supported, false);
    const res = await requestWithoutUser(op, requestObjectParams(op, variant, 'request'));
    checkErrorResponse(errorParams(res, variant), undefined, ['request_not_supported']);
  },

  /**
   * OIDCCEnsureRequestObjectWithRedirectUri: the request object's redirect_uri is registered, the
   * parameter's is not. A provider that reads request objects uses the object's; Gatehouse does not
   * read them, and never redirects to an unregistered URI (RFC 6749 §3.1.2.4): its error page. The
   * module waits for a redirect or request_not_supported, so it cannot pass (docs/conformance.md).
   */
  'oidcc-ensure-request-object-with-redirect-uri': async (op, variant) => {
    const res = await requestWithoutUser(
      op,
      requestObjectParams(op, variant, 'request', `${REDIRECT_URI}_invalid`),
    );
    assert.equal(res.status, 400);
    assert.equal(res.headers.location, undefined, 'never to an unregistered redirect URI');
  },

  /**
   * OIDCCClaimsEssential: the claims parameter (name essential, in UserInfo; in the ID token for
   * response_type=id_token) must not cause an error. Gatehouse does not support it
   * (claims_parameter_supported false) and ignores it: only what the scope releases comes (the module
   * warns when name is missing).
   */
  'oidcc-claims-essential': async (op, variant) => {
    assert.equal((await discovery(op)).claims_parameter_supported, false);
    const where = variant.responseType === 'id_token' ? 'id_token' : 'userinfo';
    const flow = await succeedsWith(op, variant, {
      claims: JSON.stringify({ [where]: { name: { essential: true } } }),
    });
    assert.equal(flow.idToken.claims.name, undefined, 'the scope (openid) releases no name');
    if (flow.accessToken !== undefined) {
      const claims = checkUserInfo(op, await userInfo(op, flow.accessToken));
      assert.equal(claims.name, undefined);
    }
  },

  /**
   * OIDCCRefreshToken: with offline_access and prompt=consent (Core §11) a refresh token comes; its
   * characters (RFC 6749 §A.17); the refresh answers a new access token and an ID token whose iss, sub,
   * aud, auth_time and azp are the first's and whose iat is new (Core §12.2); the same for a second
   * client; the second client's refresh token does not work for the first (RFC 6749 §6: invalid_grant).
   */
  'oidcc-refresh-token': async (op, variant) => {
    const refreshTokens: string[] = [];
    for (const rp of [op.rp, op.rp2]) {
      await withAgent(op, async (agent) => {
        const flow = await serverFlow(op, variant, {
          agent,
          rp,
          scope: 'openid offline_access',
          extra: { prompt: 'consent' },
        });
        const refreshToken = flow.tokens?.refresh_token;
        assert.ok(refreshToken, 'Core §11: offline_access with consent gives a refresh token');
        assert.match(refreshToken, /^[\x20-\x7e]+$/, 'RFC 6749 §A.17');
        assert.ok(entropyBits(refreshToken) >= 96, 'RFC 6749 §10.10: enough entropy');
        op.server.clock.advance(1);
        const refreshed = checkTokenResponse(
          await tokenRequest(op, rp, {
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            scope: 'openid offline_access',
          }),
        );
        const first = flow.idToken.claims;
        const second = (await checkIdToken(op, refreshed.id_token, { rp, nonce: null })).claims;
        for (const claim of ['iss', 'sub', 'aud', 'auth_time', 'azp'] as const) {
          assert.deepEqual(second[claim], first[claim], `Core §12.2: the same ${claim}`);
        }
        assert.notEqual(second.iat, first.iat, 'Core §12.2: iat of the new ID token');
        if (second.at_hash !== undefined) {
          assert.equal(second.at_hash, leftHalfHash(refreshed.access_token), 'Core §3.3.2.11: at_hash');
        }
        checkUserInfo(op, await userInfo(op, refreshed.access_token));
        refreshTokens.push(refreshed.refresh_token ?? refreshToken);
      });
    }
    const [, secondClients] = refreshTokens;
    checkTokenError(
      await tokenRequest(op, op.rp, { grant_type: 'refresh_token', refresh_token: secondClients ?? '' }),
      'invalid_grant',
    );
  },

  /**
   * OIDCCEnsureRequestWithValidPkceSucceeds: a valid S256 challenge and its verifier (RFC 7636 §4.3,
   * §4.5) succeed.
   */
  'oidcc-ensure-request-with-valid-pkce-succeeds': async (op, variant) => {
    const pkce = pkcePair();
    await withAgent(op, (agent) =>
      serverFlow(op, variant, {
        agent,
        extra: { code_challenge: pkce.challenge, code_challenge_method: 'S256' },
        codeVerifier: pkce.verifier,
      }),
    );
  },
} satisfies Record<string, Module>;

export type ModuleName = keyof typeof MODULES;
