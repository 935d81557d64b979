import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JWK } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ISSUER } from '../helpers/conformance-variants.js';

// The Config OP plan (oidcc-config-certification-test-plan): its one module,
// oidcc-discovery-endpoint-verification, on every store. No browser: discovery and jwks_uri only.

const DISCOVERY_PATH = '/.well-known/openid-configuration';

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** BCP 47 language tags, as ui_locales_supported and claims_locales_supported hold them (RFC 8414 §2). */
const LANGUAGE_TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;
/** The members of private or symmetric keys (RFC 7518 §6.2.2, §6.3.2, §6.4). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** An https URL (Discovery §3: every endpoint; RFC 8414 §2). */
function assertHttpsUrl(value: unknown, name: string): URL {
  assert.equal(typeof value, 'string', `${name} is a string`);
  const url = new URL(String(value));
  assert.equal(url.protocol, 'https:', `${name} uses https`);
  return url;
}

/** Unpadded base64url (RFC 7515 §2), as JWK members are encoded (ValidateServerJWKs). */
function assertBase64url(value: unknown, name: string): void {
  assert.equal(typeof value, 'string', `${name} is present`);
  assert.match(String(value), /^[A-Za-z0-9_-]+$/, `${name} is unpadded base64url`);
}

/** The checks of ValidateServerJWKs, CheckForKeyIdInServerJWKs, CheckDistinctKeyIdValueInServerJWKs
 * and EnsureServerJwksDoesNotContainPrivateOrSymmetricKeys (RFC 7517 §4, §5; Core §10.1). */
function checkServerJwks(keys: JWK[]): void {
  assert.ok(keys.length > 0, 'RFC 7517 §5: a set of keys');
  for (const key of keys) {
    assert.ok(key.kty === 'RSA' || key.kty === 'EC', `RFC 7518 §6.1: a public key type, got ${key.kty}`);
    assert.ok(typeof key.kid === 'string' && key.kid.length > 0, 'Core §10.1: every key has a kid');
    if (key.use !== undefined) assert.equal(key.use, 'sig', 'RFC 7517 §4.2: signature keys');
    for (const member of PRIVATE_MEMBERS) assert.ok(!(member in key), `no private member ${member}`);
    if (key.kty === 'RSA') {
      assertBase64url(key.n, 'n');
      assertBase64url(key.e, 'e');
    } else {
      assert.equal(key.crv, 'P-256');
      assertBase64url(key.x, 'x');
      assertBase64url(key.y, 'y');
    }
  }
  const kids = keys.map((key) => key.kid);
  assert.equal(new Set(kids).size, kids.length, 'RFC 7517 §4.5: distinct kids');
}

for (const backend of backends()) {
  describe(`OpenID Connect conformance: Config OP plan (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server?.close();
    });

    it('oidcc-discovery-endpoint-verification', async () => {
      // GetDynamicServerConfiguration, EnsureDiscoveryEndpointResponseStatusCodeIs200,
      // CheckDiscoveryEndpointReturnedJsonContentType (Discovery §4.2).
      const res = await server.http.request(DISCOVERY_PATH);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const config = res.json as Record<string, unknown>;

      // OIDCCCheckDiscEndpointResponseTypesSupported: at least one OpenID Connect response type
      // (Core §3), compared as sets of their parts.
      const types = (config.response_types_supported as string[]).map((type) =>
        type.split(' ').sort().join(' '),
      );
      for (const type of [
        'code',
        'id_token',
        'id_token token',
        'code id_token',
        'code token',
        'code id_token token',
      ]) {
        assert.ok(types.includes(type.split(' ').sort().join(' ')), `response_types_supported lists ${type}`);
      }

      // CheckDiscEndpointDiscoveryUrl, CheckDiscEndpointIssuer, CheckDiscEndpointIssuerIsValidUrl:
      // the document is at the issuer + /.well-known/openid-configuration (Discovery §4, §4.3).
      const issuer = assertHttpsUrl(config.issuer, 'issuer');
      assert.equal(config.issuer, ISSUER);
      assert.equal(issuer.search + issuer.hash, '', 'RFC 8414 §2: no query or fragment');
      assert.equal(`${issuer.pathname.replace(/\/$/, '')}${DISCOVERY_PATH}`, DISCOVERY_PATH);

      // CheckDiscEndpointSubjectTypesSupported (Discovery §3: REQUIRED; public or pairwise).
      const subjectTypes = config.subject_types_supported as string[];
      assert.ok(
        subjectTypes.length > 0 && subjectTypes.every((type) => ['public', 'pairwise'].includes(type)),
      );

      // OIDCCCheckDiscEndpointIdTokenSigningAlgValuesSupported: RS256 is required (Discovery §3).
      const algs = config.id_token_signing_alg_values_supported as string[];
      assert.ok(algs.includes('RS256'));
      // Skipped by the module when absent; Gatehouse signs no UserInfo responses.
      assert.equal(config.userinfo_signing_alg_values_supported, undefined);

      // CheckDiscEndpointAuthorizationEndpoint, TokenEndpoint, UserinfoEndpoint (Discovery §3).
      assertHttpsUrl(config.authorization_endpoint, 'authorization_endpoint');
      assertHttpsUrl(config.token_endpoint, 'token_endpoint');
      assertHttpsUrl(config.userinfo_endpoint, 'userinfo_endpoint');
      // CheckDiscEndpointRegistrationEndpoint: skipped when absent; no dynamic registration here.
      assert.equal(config.registration_endpoint, undefined);

      // CheckJwksUri, FetchServerKeys, ValidateServerJWKs, EnsureServerJwksDoesNotContainPrivateOrSymmetricKeys.
      const jwksUri = assertHttpsUrl(config.jwks_uri, 'jwks_uri');
      assert.equal(jwksUri.origin, issuer.origin);
      const jwks = await server.http.request(jwksUri.pathname);
      assert.equal(jwks.status, 200);
      assert.match(String(jwks.headers['content-type']), /^application\/(jwk-set\+)?json/);
      checkServerJwks((jwks.json as { keys: JWK[] }).keys);

      // CheckDiscEndpointRequestParameterSupported, RequestUriParameterSupported, ClaimsParameterSupported
      // (informational): booleans, false here (Discovery §3 defaults: request false, request_uri true).
      assert.equal(config.request_parameter_supported, false);
      assert.equal(config.request_uri_parameter_supported, false);
      assert.equal(config.claims_parameter_supported, false);
      // CheckDiscEndpointRequestObjectSigningAlgValuesSupportedIncludesRS256: skipped when absent.
      assert.equal(config.request_object_signing_alg_values_supported, undefined);

      // OIDCCCheckDiscEndpointClaimsSupported (recommended): sub and the claims Gatehouse releases.
      const claims = config.claims_supported as string[];
      for (const claim of [
        'sub',
        'iss',
        'auth_time',
        'name',
        'preferred_username',
        'email',
        'email_verified',
      ]) {
        assert.ok(claims.includes(claim), `claims_supported lists ${claim}`);
      }

      // OIDCCCheckDiscEndpointGrantTypesSupported: a non-empty array, if present.
      const grants = config.grant_types_supported as string[];
      assert.ok(Array.isArray(grants) && grants.length > 0);
      for (const grant of ['authorization_code', 'implicit', 'refresh_token'])
        assert.ok(grants.includes(grant));

      // CheckDiscEndpointScopesSupportedContainsOpenId, CheckDiscEndpointScopesSupportedSyntax.
      const scopes = config.scopes_supported as string[];
      assert.ok(scopes.includes('openid'));
      for (const scope of scopes) assert.match(scope, SCOPE_TOKEN);

      // CheckDiscEndpointLocalesSyntax: where present, language tags.
      for (const member of ['ui_locales_supported', 'claims_locales_supported']) {
        const locales = config[member];
        if (locales !== undefined) for (const tag of locales as string[]) assert.match(tag, LANGUAGE_TAG);
      }

      // CheckDiscEndpointAllEndpointsAreHttps: every *_endpoint member.
      for (const [member, value] of Object.entries(config)) {
        if (member.endsWith('_endpoint')) assertHttpsUrl(value, member);
      }

      // EnsureServerConfigurationCodeChallengeMethodsSupportedIsAnArray (RFC 8414 §2).
      assert.ok(Array.isArray(config.code_challenge_methods_supported));
    });
  });
}
