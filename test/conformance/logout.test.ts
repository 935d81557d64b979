import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { backends } from '../helpers/backends.js';
import {
  authorizationRequest,
  authorizeUrl,
  browserSkip,
  checkErrorResponse,
  ISSUER,
  launchChrome,
  longState,
  newUserAgent,
  POST_LOGOUT_REDIRECT_URI,
  randomValue,
  responseParams,
  RP_ORIGIN,
  serverFlow,
  startOp,
  type Chrome,
  type FlowResult,
  type Op,
  type UserAgent,
  type Variant,
} from '../helpers/conformance-variants.js';
import type { LogoutOutcome } from './user-agent.js';

// The RP-Initiated Logout OP plan (oidcc-rp-initiated-logout-certification-test-plan), on every
// store: a sign-in with response_type=code, then the end_session_endpoint in the same browser with
// the parameters each module sends (OpenID Connect RP-Initiated Logout 1.0 §2, §3). Gatehouse asks
// the user to confirm on a page with a "Sign out" button; the tests press it where a module expects
// the user signed out.

const CODE: Variant = { responseType: 'code', responseMode: 'default' };

/** Core §3.1.2.6 errors that say a user interface was needed. */
const USER_INTERFACE_ERRORS = [
  'login_required',
  'interaction_required',
  'consent_required',
  'account_selection_required',
];

/** The browser at the end_session_endpoint with `params` (UserAgent.endSession). */
function endSession(op: Op, agent: UserAgent, params: Record<string, string>): Promise<LogoutOutcome> {
  return agent.endSession(`${op.server.url}/logout?${new URLSearchParams(params).toString()}`);
}

/** A signed-in browser: the first part of every module (AbstractOIDCCRpInitiatedLogout). */
async function signedIn(op: Op, agent: UserAgent): Promise<FlowResult> {
  return serverFlow(op, CODE, { agent });
}

/**
 * The module's second authorization, with prompt=none: signed out, so an error that needs a user
 * interface (Core §3.1.2.6), the 128-character state intact.
 */
async function expectSignedOut(op: Op, agent: UserAgent): Promise<void> {
  const request = authorizationRequest(op, { variant: CODE, state: longState(), extra: { prompt: 'none' } });
  const outcome = await agent.browse(authorizeUrl(op, request.params));
  assert.deepEqual(outcome.pages, []);
  checkErrorResponse(responseParams(outcome, CODE), request.state, USER_INTERFACE_ERRORS);
}

/** Still signed in: prompt=none answers with a code at once. */
async function expectStillSignedIn(op: Op, agent: UserAgent): Promise<void> {
  const request = authorizationRequest(op, { variant: CODE, extra: { prompt: 'none' } });
  const outcome = await agent.browse(authorizeUrl(op, request.params));
  assert.ok(responseParams(outcome, CODE).get('code'), 'nothing was ended');
}

/** A logout request that must not send the browser back (an error page, or a confirmation without redirect). */
async function expectNoReturn(op: Op, agent: UserAgent, params: Record<string, string>): Promise<void> {
  const outcome = await endSession(op, agent, params);
  assert.equal(outcome.returned, undefined, 'RP-Initiated Logout §3: no redirect');
  if (!outcome.confirmed) {
    assert.equal(outcome.heading, 'This sign-out request cannot be completed');
    await expectStillSignedIn(op, agent);
  }
}

/** ChangeIdTokenToAlgNone: the same claims, alg none, no signature. */
function algNone(idToken: string): string {
  const [, payload] = idToken.split('.');
  return `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
}

/** GenerateFakeIdTokenClaims, SignFakeIdToken: an ID token for the user signed by another key. */
async function foreignIdToken(op: Op, sub: string): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  const now = op.server.clock.now();
  return new SignJWT({ sub, aud: op.rp.client.id, nonce: randomValue() })
    .setProtectedHeader({ alg: 'RS256', kid: 'not-gatehouse' })
    .setIssuer(ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(privateKey);
}

describe('OpenID Connect conformance: RP-Initiated Logout OP plan', { skip: browserSkip }, () => {
  let chrome: Chrome;
  before(async () => {
    chrome = await launchChrome();
  });
  after(async () => {
    await chrome?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let op: Op;
      before(async () => {
        op = await startOp(backend, chrome);
      });
      after(async () => {
        await op?.close();
      });

      /**
       * A module: a new browser, signed in, then `body`. The form agent (form-agent.ts) plays the
       * browser, Chromium where `browser` says: the module that goes the whole way, from the sign-in to
       * the confirmation page and back to the relying party.
       */
      const module =
        (body: (agent: UserAgent, flow: FlowResult) => Promise<void>, browser = false) =>
        async () => {
          const agent = await newUserAgent(op, browser ? 'browser' : 'form');
          try {
            await body(agent, await signedIn(op, agent));
          } finally {
            await agent.close();
          }
        };

      it('oidcc-rp-initiated-logout-discovery-endpoint-verification', async () => {
        // CheckDiscEndSessionEndpoint (RP-Initiated Logout §2.1), CheckDiscEndpointAllEndpointsAreHttps.
        const config = (await op.server.http.request('/.well-known/openid-configuration')).json as Record<
          string,
          unknown
        >;
        assert.equal(config.end_session_endpoint, `${ISSUER}/logout`);
        for (const [member, value] of Object.entries(config)) {
          if (member.endsWith('_endpoint')) assert.equal(new URL(String(value)).protocol, 'https:', member);
        }
      });

      it(
        'oidcc-rp-initiated-logout',
        module(async (agent, flow) => {
          // RP-Initiated Logout §2, §3: back to the registered post_logout_redirect_uri with state,
          // nothing else (CheckPostLogoutState, CheckForUnexpectedParametersInPostLogoutRedirect).
          const state = longState();
          const outcome = await endSession(op, agent, {
            id_token_hint: flow.idToken.raw,
            post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
            state,
          });
          assert.ok(outcome.returned, 'back at the relying party');
          const back = new URL(outcome.returned.url, RP_ORIGIN);
          assert.equal(back.origin + back.pathname, POST_LOGOUT_REDIRECT_URI);
          assert.deepEqual([...back.searchParams], [['state', state]]);
          await expectSignedOut(op, agent);
        }, true),
      );

      it(
        'oidcc-rp-initiated-logout-bad-post-logout-redirect-uri',
        module(async (agent, flow) => {
          await expectNoReturn(op, agent, {
            id_token_hint: flow.idToken.raw,
            post_logout_redirect_uri: `${RP_ORIGIN}/bad_post_logout_redirect`,
            state: randomValue(),
          });
        }),
      );

      it(
        'oidcc-rp-initiated-logout-modified-id-token-hint',
        module(async (agent, flow) => {
          await expectNoReturn(op, agent, {
            id_token_hint: algNone(flow.idToken.raw),
            post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
            state: randomValue(),
          });
        }),
      );

      it(
        'oidcc-rp-initiated-logout-no-id-token-hint',
        module(async (agent) => {
          // RP-Initiated Logout §3: without id_token_hint the OP must not redirect (it cannot tell
          // the target is the client's).
          await expectNoReturn(op, agent, {
            post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
            state: randomValue(),
          });
        }),
      );

      it(
        'oidcc-rp-initiated-logout-no-params',
        module(async (agent) => {
          const outcome = await endSession(op, agent, {});
          assert.ok(outcome.confirmed, 'RP-Initiated Logout §2: the user is asked');
          assert.equal(outcome.returned, undefined);
          assert.equal(outcome.heading, 'You are signed out');
          await expectSignedOut(op, agent);
        }),
      );

      it(
        'oidcc-rp-initiated-logout-no-post-logout-redirect-uri',
        module(async (agent, flow) => {
          const outcome = await endSession(op, agent, {
            id_token_hint: flow.idToken.raw,
            state: randomValue(),
          });
          assert.ok(outcome.confirmed);
          assert.equal(outcome.returned, undefined, 'nowhere to return to');
          assert.equal(outcome.heading, 'You are signed out');
          await expectSignedOut(op, agent);
        }),
      );

      it(
        'oidcc-rp-initiated-logout-no-state',
        module(async (agent, flow) => {
          // CheckNoPostLogoutState: no state sent, none returned.
          const outcome = await endSession(op, agent, {
            id_token_hint: flow.idToken.raw,
            post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
          });
          assert.ok(outcome.returned);
          assert.equal(new URL(outcome.returned.url, RP_ORIGIN).href, POST_LOGOUT_REDIRECT_URI);
          await expectSignedOut(op, agent);
        }),
      );

      it(
        'oidcc-rp-initiated-logout-only-state',
        module(async (agent) => {
          const outcome = await endSession(op, agent, { state: randomValue() });
          assert.ok(outcome.confirmed);
          assert.equal(outcome.returned, undefined);
          assert.equal(outcome.heading, 'You are signed out');
          await expectSignedOut(op, agent);
        }),
      );

      // Two more modules of the suite, in no certification plan.
      it(
        'oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri',
        module(async (agent, flow) => {
          await expectNoReturn(op, agent, {
            id_token_hint: flow.idToken.raw,
            post_logout_redirect_uri: `${POST_LOGOUT_REDIRECT_URI}?foo=bar`,
            state: randomValue(),
          });
        }),
      );

      it(
        'oidcc-rp-initiated-logout-bad-id-token-hint',
        module(async (agent, flow) => {
          await expectNoReturn(op, agent, {
            id_token_hint: await foreignIdToken(op, String(flow.idToken.claims.sub)),
            post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
            state: randomValue(),
          });
        }),
      );
    });
  }
});
