import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  authorizationRequest,
  refuse,
  requestDraft,
  trustDraft,
  type RequestDraft,
} from '../../src/core/authorize/request-steps/draft.js';
import {
  AUTHORIZATION_STEPS,
  REQUEST_STEPS,
  TRUST_STEPS,
  type RequestStep,
  type TrustStep,
} from '../../src/core/authorize/request-steps/index.js';
import type { AuthorizationPolicy } from '../../src/core/authorize/request.js';
import type { Client } from '../../src/core/model.js';
import type { Storage } from '../../src/core/ports.js';
import { ManualClock } from '../../src/shared/clock.js';
import { addClient, REDIRECT } from '../helpers/fakes/fixtures.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { ISSUER, START } from '../helpers/fakes/test-engine.js';

// The steps of validateAuthorizationRequest, one at a time, on the in-memory fakes. The whole
// validation, in order, is authorize-request.test.ts's and authorize-openid.test.ts's.

const POLICY: AuthorizationPolicy = { issuer: ISSUER, allowPlainPkce: false };

function trustStep(name: string): TrustStep {
  const step = TRUST_STEPS.find((candidate) => candidate.name === name);
  assert.ok(step, `no trust step ${name}`);
  return step;
}

function requestStep(name: string): RequestStep {
  const step = REQUEST_STEPS.find((candidate) => candidate.name === name);
  assert.ok(step, `no request step ${name}`);
  return step;
}

/** A request step's draft as the trust steps would leave it: `client`'s, at the registered REDIRECT. */
function draftFor(client: Client, params: Record<string, string>, policy = POLICY): RequestDraft {
  return requestDraft(
    {
      params: new URLSearchParams(params),
      client,
      openid: false,
      redirectUri: REDIRECT,
      pushedRequest: null,
      carriedQuery: undefined,
    },
    policy,
  );
}

describe('the authorization request steps', () => {
  let storage: Storage;
  let confidential: Client;
  let publicClient: Client;

  before(async () => {
    storage = memoryStorage();
    const engine = { storage, clock: new ManualClock(START) };
    confidential = (await addClient(engine, { id: 'conf' })).client;
    publicClient = (await addClient(engine, { id: 'pub', isPublic: true })).client;
  });

  it('are these, in this order (a new parameter is a new step: add it here)', () => {
    assert.deepEqual(
      TRUST_STEPS.map((step) => step.name),
      ['client', 'pushed-request', 'redirect-uri'],
    );
    assert.deepEqual(
      REQUEST_STEPS.map((step) => step.name),
      [
        'pushed-required',
        'repeated-parameters',
        'state',
        'response-type',
        'response-mode',
        'request-object',
        'request-uri',
        'scope-and-resources',
        'pkce',
        'dpop',
        'openid-parameters',
        'authentication-requirements',
      ],
    );
    assert.deepEqual(AUTHORIZATION_STEPS, [...TRUST_STEPS, ...REQUEST_STEPS]);
  });

  describe('trust steps: an error page', () => {
    it('client: an unknown client', async () => {
      const draft = trustDraft('client_id=nobody', storage.clients, POLICY);
      assert.deepEqual(await trustStep('client').run(draft), {
        page: 'The application is not registered here.',
      });
      assert.equal(draft.client, undefined);
    });

    it('client: a known one is set for the next steps', async () => {
      const draft = trustDraft('client_id=conf', storage.clients, POLICY);
      assert.equal(await trustStep('client').run(draft), undefined);
      assert.equal(draft.client?.id, 'conf');
    });

    it('redirect-uri: one not registered', async () => {
      const draft = trustDraft(
        new URLSearchParams({ redirect_uri: 'https://attacker.example/callback' }).toString(),
        storage.clients,
        POLICY,
      );
      draft.client = confidential;
      assert.deepEqual(await trustStep('redirect-uri').run(draft), {
        page: 'The return address (redirect_uri) is not one the application registered.',
      });
      assert.equal(draft.redirectUri, undefined);
    });

    it('redirect-uri: run before client is a bug of the list, not a bad request', async () => {
      const draft = trustDraft('redirect_uri=x', storage.clients, POLICY);
      await assert.rejects(async () => trustStep('redirect-uri').run(draft), /step client has not run/);
    });
  });

  describe('request steps: an OAuth error for the redirect URI', () => {
    it('repeated-parameters', async () => {
      const draft = draftFor(confidential, {});
      draft.params.append('scope', 'read');
      draft.params.append('scope', 'write');
      assert.deepEqual(await requestStep('repeated-parameters').run(draft), {
        error: 'invalid_request',
        description: 'parameter repeated: scope',
      });
    });

    it('response-type: a client without the implicit grant asking for a token', async () => {
      assert.deepEqual(
        await requestStep('response-type').run(draftFor(confidential, { response_type: 'token' })),
        {
          error: 'unauthorized_client',
          description: 'this client is not registered for the implicit grant',
        },
      );
    });

    it('request-uri: one not of the pushed authorization request endpoint', async () => {
      const draft = draftFor(confidential, { response_type: 'code', request_uri: 'https://app.example/r' });
      assert.deepEqual(await requestStep('request-uri').run(draft), {
        error: 'request_uri_not_supported',
        description: 'request_uri is supported only as returned by the pushed authorization request endpoint',
      });
    });

    it('scope-and-resources: a resource where none is registered', async () => {
      const draft = draftFor(confidential, { response_type: 'code', resource: 'https://api.example/' });
      assert.deepEqual(await requestStep('scope-and-resources').run(draft), {
        error: 'invalid_target',
        description: 'no resource server is registered here',
      });
    });

    it('pkce: a public client without a challenge', async () => {
      assert.deepEqual(await requestStep('pkce').run(draftFor(publicClient, { response_type: 'code' })), {
        error: 'invalid_request',
        description: 'public clients must send a code_challenge (S256)',
      });
    });

    it('pkce: an accepted challenge is set for the request', async () => {
      const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
      const draft = draftFor(publicClient, {
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(await requestStep('pkce').run(draft), undefined);
      assert.deepEqual(draft.pkce, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
    });

    it('dpop: a malformed dpop_jkt', async () => {
      const draft = draftFor(confidential, { response_type: 'code', dpop_jkt: 'not a thumbprint' });
      assert.deepEqual(await requestStep('dpop').run(draft), {
        error: 'invalid_request',
        description: 'dpop_jkt must be a base64url SHA-256 JWK thumbprint (RFC 7638)',
      });
    });

    it('a step after response-type with no response type to read is a bug of the list', async () => {
      await assert.rejects(
        async () => requestStep('pkce').run(draftFor(confidential, {})),
        /step response-type has not run/,
      );
    });

    it('the request is not assembled before every step that fills it has run', () => {
      assert.throws(
        () => authorizationRequest(draftFor(confidential, { response_type: 'code' })),
        /step scope-and-resources has not run/,
      );
    });
  });

  describe('refuse: where a request step’s error goes', () => {
    const failure = { error: 'invalid_request', description: 'state is too long' } as const;

    it('an operator-registered client: redirected, with state and iss', () => {
      const refusal = refuse(draftFor(confidential, { response_type: 'code', state: 's' }), failure);
      assert.equal(refusal.outcome, 'error-redirect');
      if (refusal.outcome !== 'error-redirect') return;
      assert.equal(refusal.response.redirectUri, REDIRECT);
      assert.equal(refusal.response.mode, 'query');
      assert.deepEqual(refusal.response.params, [
        ['error', 'invalid_request'],
        ['error_description', 'state is too long'],
        ['state', 's'],
        ['iss', ISSUER],
      ]);
    });

    it('a self-registered client: an error page (RFC 9700 §4.11.2, decision 20)', () => {
      const draft = draftFor({ ...confidential, registration: 'open' }, { response_type: 'code' });
      assert.deepEqual(refuse(draft, failure), {
        outcome: 'error-page',
        description:
          'The application sent a request that cannot be answered: state is too long (invalid_request).',
      });
    });
  });
});
