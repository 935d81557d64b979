import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addClient, addUser } from '../helpers/fakes/fixtures.js';
import { START, testEngine } from '../helpers/fakes/test-engine.js';

// RP-Initiated Logout 1.0 §2, §3: the end-session endpoint's checks, and where the browser goes after.

const AFTER = 'https://rp.example/signed-out';
const WITH_QUERY = 'https://rp.example/bye?tenant=7';

/** Placeholders a row's query may hold, replaced by ID tokens the row's engine issued. */
const HINT = '$HINT';
const EXPIRED_HINT = '$EXPIRED_HINT';
const ALG_NONE_HINT = '$ALG_NONE_HINT';
/** An ID token issued to `self`, a client that registered itself (RFC 7591). */
const SELF_HINT = '$SELF_HINT';
const SELF_AFTER = 'https://self.example/bye';

type Expected = { page: string | RegExp } | { client: string | undefined; location: string | undefined };

const ROWS: { name: string; query: Record<string, string | string[]>; expected: Expected }[] = [
  {
    name: 'no parameters: sign out, nowhere to go after (oidcc-rp-initiated-logout-no-params)',
    query: {},
    expected: { client: undefined, location: undefined },
  },
  {
    name: 'only state: nowhere to go, so state goes nowhere (oidcc-rp-initiated-logout-only-state)',
    query: { state: 'st' },
    expected: { client: undefined, location: undefined },
  },
  {
    name: 'id_token_hint alone names the client (oidcc-rp-initiated-logout-no-post-logout-redirect-uri)',
    query: { id_token_hint: HINT, state: 'st' },
    expected: { client: 'rp', location: undefined },
  },
  {
    name: 'id_token_hint and a registered post_logout_redirect_uri: back there with state (oidcc-rp-initiated-logout)',
    query: { id_token_hint: HINT, post_logout_redirect_uri: AFTER, state: 'st 1/2' },
    expected: { client: 'rp', location: `${AFTER}?state=st+1%2F2` },
  },
  {
    name: 'without state, none is added (oidcc-rp-initiated-logout-no-state)',
    query: { id_token_hint: HINT, post_logout_redirect_uri: AFTER },
    expected: { client: 'rp', location: AFTER },
  },
  {
    name: 'an expired id_token_hint still names the client',
    query: { id_token_hint: EXPIRED_HINT, post_logout_redirect_uri: AFTER, state: 's' },
    expected: { client: 'rp', location: `${AFTER}?state=s` },
  },
  {
    name: 'client_id instead of id_token_hint',
    query: { client_id: 'rp', post_logout_redirect_uri: AFTER, state: 's' },
    expected: { client: 'rp', location: `${AFTER}?state=s` },
  },
  {
    name: 'a registered URI’s own query is kept',
    query: { client_id: 'rp', post_logout_redirect_uri: WITH_QUERY, state: 's' },
    expected: { client: 'rp', location: `${WITH_QUERY}&state=s` },
  },
  {
    name: 'ui_locales and unknown parameters are ignored',
    query: { client_id: 'rp', post_logout_redirect_uri: AFTER, ui_locales: 'fr', extra: 'x' },
    expected: { client: 'rp', location: AFTER },
  },
  {
    name: 'an id_token_hint changed to alg none: a page, no redirect (oidcc-rp-initiated-logout-modified-id-token-hint)',
    query: { id_token_hint: ALG_NONE_HINT, post_logout_redirect_uri: AFTER, state: 's' },
    expected: { page: 'The application sent a sign-in token (id_token_hint) that was not issued here.' },
  },
  {
    name: 'an id_token_hint that is no JWT: a page',
    query: { id_token_hint: 'junk' },
    expected: { page: /id_token_hint/ },
  },
  {
    name: 'post_logout_redirect_uri without id_token_hint or client_id: a page (oidcc-rp-initiated-logout-no-id-token-hint)',
    query: { post_logout_redirect_uri: AFTER, state: 's' },
    expected: { page: /does not say which application/ },
  },
  {
    name: 'a query added to the registered URI: a page (oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri)',
    query: { id_token_hint: HINT, post_logout_redirect_uri: `${AFTER}?foo=bar`, state: 's' },
    expected: {
      page: 'The return address (post_logout_redirect_uri) is not one the application registered.',
    },
  },
  {
    name: 'an unregistered URI: a page (oidcc-rp-initiated-logout-bad-post-logout-redirect-uri)',
    query: { id_token_hint: HINT, post_logout_redirect_uri: 'https://attacker.example/', state: 's' },
    expected: { page: /not one the application registered/ },
  },
  {
    name: 'another client’s registered URI: a page',
    query: { id_token_hint: HINT, post_logout_redirect_uri: 'https://other.example/bye' },
    expected: { page: /not one the application registered/ },
  },
  {
    name: 'client_id that is not the id_token_hint’s audience: a page',
    query: { id_token_hint: HINT, client_id: 'other', post_logout_redirect_uri: 'https://other.example/bye' },
    expected: { page: 'The application (client_id) is not the one the sign-in token was issued to.' },
  },
  {
    name: 'an unknown client_id: a page',
    query: { client_id: 'nobody' },
    expected: { page: 'The application is not registered here.' },
  },
  // docs/decisions.md, decision 20: a self-registered client's URIs were never checked by anyone, so
  // only an ID token it was issued proves a user came from it; else /logout is an open redirector.
  {
    name: 'a self-registered client named by client_id alone: a page, no redirect',
    query: { client_id: 'self', post_logout_redirect_uri: SELF_AFTER, state: 's' },
    expected: { page: /registered itself, so it can be sent back to only with a sign-in token/ },
  },
  {
    name: 'a self-registered client with an ID token of another client: a page',
    query: { id_token_hint: HINT, client_id: 'self', post_logout_redirect_uri: SELF_AFTER },
    expected: { page: /not the one the sign-in token was issued to/ },
  },
  {
    name: 'a self-registered client with its own ID token: back there with state',
    query: { id_token_hint: SELF_HINT, post_logout_redirect_uri: SELF_AFTER, state: 's' },
    expected: { client: 'self', location: `${SELF_AFTER}?state=s` },
  },
  {
    name: 'a self-registered client named by client_id, no return address: signs out, nowhere to go',
    query: { client_id: 'self' },
    expected: { client: 'self', location: undefined },
  },
  {
    name: 'a repeated state: a page',
    query: { client_id: 'rp', post_logout_redirect_uri: AFTER, state: ['a', 'b'] },
    expected: { page: 'state was sent more than once.' },
  },
];

describe('RP-initiated logout requests (RP-Initiated Logout 1.0 §2, §3)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const engine = await testEngine();
      try {
        const { client } = await addClient(engine, {
          id: 'rp',
          name: 'Relying Party',
          scopes: ['openid'],
          postLogoutRedirectUris: [AFTER, WITH_QUERY],
        });
        await addClient(engine, {
          id: 'other',
          scopes: ['openid'],
          postLogoutRedirectUris: ['https://other.example/bye'],
        });
        const { client: self } = await addClient(engine, {
          id: 'self',
          scopes: ['openid'],
          postLogoutRedirectUris: [SELF_AFTER],
          registration: 'open',
        });
        const user = await addUser(engine);
        const idTokens = engine.engine.idTokens;
        const hint = await idTokens.issue({
          client,
          userId: user.id,
          scope: ['openid'],
          authTime: START,
          sid: 's1',
        });
        const expired = await idTokens.issue({
          client,
          userId: user.id,
          scope: ['openid'],
          authTime: START - 86_400,
          sid: 's0',
          now: START - 86_400,
        });
        const selfHint = await idTokens.issue({
          client: self,
          userId: user.id,
          scope: ['openid'],
          authTime: START,
          sid: 's2',
        });
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
        const tokens: Record<string, string> = {
          [HINT]: hint,
          [EXPIRED_HINT]: expired,
          [ALG_NONE_HINT]: `${header}.${hint.split('.')[1] ?? ''}.`,
          [SELF_HINT]: selfHint,
        };
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(row.query)) {
          for (const item of Array.isArray(value) ? value : [value])
            params.append(name, tokens[item] ?? item);
        }
        const validation = await engine.engine.logout.validate(params.toString());
        const expected = row.expected;
        if ('page' in expected) {
          assert.equal(validation.outcome, 'error-page', JSON.stringify(validation));
          if (validation.outcome !== 'error-page') return;
          if (typeof expected.page === 'string') assert.equal(validation.description, expected.page);
          else assert.match(validation.description, expected.page);
          return;
        }
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        assert.equal(validation.request.client?.id, expected.client);
        assert.equal(engine.engine.logout.location(validation.request), expected.location);
      } finally {
        await engine.close();
      }
    });
  }
});
