import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import {
  authorizationRequest,
  browserSkip,
  jwks,
  launchChrome,
  newUserAgent,
  REDIRECT_URI,
  serverFlow,
  startOp,
  type Chrome,
  type Op,
  type Rp,
  type Variant,
} from '../helpers/conformance-variants.js';

// The modules of the Dynamic OP plan (oidcc-dynamic-certification-test-plan) that do not need dynamic
// client registration, run here with clients registered by the operator, on every store. The plan
// itself has not been run against Gatehouse's registration endpoint yet (docs/conformance.md).

const CODE: Variant = { responseType: 'code', responseMode: 'default' };

describe(
  'OpenID Connect conformance: Dynamic OP plan, the modules a registered client can run',
  { skip: browserSkip },
  () => {
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

        const registered = async (input: Parameters<Op['server']['client']>[0]): Promise<Rp> =>
          op.server.client({
            name: 'Registered RP',
            grant_types: ['authorization_code', 'implicit'],
            scopes: ['openid', 'profile', 'email'],
            ...input,
          });

        /**
         * A flow with the form agent (form-agent.ts); in Chromium where the module is about where the
         * browser lands.
         */
        const flow = async (rp: Rp, redirectUri: string, variant: Variant = CODE, browser = false) => {
          const agent = await newUserAgent(op, browser ? 'browser' : 'form');
          try {
            return await serverFlow(op, variant, { agent, rp, redirectUri });
          } finally {
            await agent.close();
          }
        };

        /** The authorization endpoint's answer to a request no user sees. */
        const withoutUser = (params: Record<string, string>) =>
          op.server.http.request(`/authorize?${new URLSearchParams(params).toString()}`);

        it('oidcc-idtoken-rs256', async () => {
          // CheckIdTokenSignatureAlgorithm, EnsureIdTokenContainsKid: the registered algorithm
          // (Registration §2 id_token_signed_response_alg), with a kid (Core §10.1), from both endpoints.
          const rs256 = await registered({
            redirect_uris: [REDIRECT_URI],
            id_token_signed_response_alg: 'RS256',
          });
          const result = await flow(rs256, REDIRECT_URI, {
            responseType: 'code id_token',
            responseMode: 'default',
          });
          for (const idToken of [result.authorizationIdToken, result.tokenIdToken])
            assert.equal(idToken?.header.alg, 'RS256');
          // The same for the other algorithm Gatehouse offers: an ES256 client's tokens are ES256.
          const es256 = await registered({
            redirect_uris: [REDIRECT_URI],
            id_token_signed_response_alg: 'ES256',
          });
          const other = await flow(es256, REDIRECT_URI, {
            responseType: 'code id_token',
            responseMode: 'default',
          });
          for (const idToken of [other.authorizationIdToken, other.tokenIdToken])
            assert.equal(idToken?.header.alg, 'ES256');
        });

        it('oidcc-server-rotate-keys', async () => {
          // The keys before and after the operator rotates them (gatehouse keys rotate): a new signing
          // key, the old one still published (Core §10.1.1), each valid (ValidateServerJWKs); and, beyond
          // the module, the next ID token signed with the new key and verified from jwks_uri.
          const before = (await jwks(op)).keys;
          await op.server.gatehouse.keyRing.rotate();
          const afterRotation = (await jwks(op)).keys;
          const oldKids = new Set(before.map((key) => key.kid));
          const added = afterRotation.filter((key) => !oldKids.has(key.kid));
          assert.ok(
            added.some((key) => key.alg === 'RS256'),
            'Core §10.1.1: a new RS256 key',
          );
          for (const key of before) {
            assert.ok(
              afterRotation.some((other) => other.kid === key.kid),
              `the old key ${key.kid} is still published`,
            );
          }
          const result = await flow(op.rp, REDIRECT_URI);
          assert.ok(
            added.some((key) => key.kid === result.idToken.header.kid),
            'signed with the new key',
          );
        });

        it('oidcc-redirect-uri-query-OK', async () => {
          // RFC 6749 §3.1.2: a registered redirect URI with a query is used as registered, the response's
          // parameters added to its query.
          const withQuery = `${REDIRECT_URI}?foo=bar`;
          const rp = await registered({ redirect_uris: [withQuery] });
          const result = await flow(rp, withQuery, CODE, true);
          assert.equal(result.outcome.query.get('foo'), 'bar', 'the registered query is kept');
        });

        it('oidcc-redirect-uri-query-mismatch', async () => {
          // Core §3.1.2.1: exact match, so another query is another URI: an error page, no redirect.
          const rp = await registered({ redirect_uris: [`${REDIRECT_URI}?foo=bar`] });
          const request = authorizationRequest(op, {
            variant: CODE,
            rp,
            redirectUri: `${REDIRECT_URI}?foo=baz`,
          });
          const res = await withoutUser(request.params);
          assert.equal(res.status, 400);
          assert.equal(res.headers.location, undefined);
        });

        it('oidcc-redirect-uri-query-added', async () => {
          const request = authorizationRequest(op, { variant: CODE, redirectUri: `${REDIRECT_URI}?foo=bar` });
          const res = await withoutUser(request.params);
          assert.equal(res.status, 400);
          assert.equal(res.headers.location, undefined);
        });

        it('oidcc-redirect-uri-regfrag', async () => {
          // RFC 6749 §3.1.2: a redirect URI has no fragment; registering one fails (with the operator's
          // registration here, dynamic registration in the suite).
          await assert.rejects(registered({ redirect_uris: [`${REDIRECT_URI}#fragment`] }));
        });

        it('oidcc-ensure-redirect-uri-in-authorization-request', async () => {
          // Core §3.1.2.1: redirect_uri is REQUIRED in an authentication request, even with one registered
          // redirect URI; an error page (or invalid_request at the registered URI) is the answer.
          const rp = await registered({ redirect_uris: [REDIRECT_URI] });
          const request = authorizationRequest(op, { variant: CODE, rp });
          delete request.params.redirect_uri;
          const res = await withoutUser(request.params);
          if (res.status === 302) {
            const location = new URL(String(res.headers.location));
            assert.equal(location.searchParams.get('error'), 'invalid_request');
            assert.equal(location.searchParams.get('state'), request.state);
          } else {
            assert.equal(res.status, 400, `an error, got ${res.status}`);
            assert.equal(res.headers.location, undefined);
          }
        });
      });
    }
  },
);
