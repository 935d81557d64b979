import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { runPlan } from './plan.js';
import { BASIC_PLAN } from './plans.js';
import { REDIRECT_URI } from '../helpers/conformance-variants.js';

// oidcc-basic-certification-test-plan: every module with response_type=code, on every store.
runPlan('OpenID Connect conformance: Basic OP plan', BASIC_PLAN);

// Beyond the modules: oidcc-scope-address, -phone and -all are skipped by the suite, as
// scopes_supported lists neither address nor phone. What Core says of such a request is below.
for (const backend of backends()) {
  describe(`OpenID Connect conformance: scope values Gatehouse does not know (${backend})`, () => {
    let server: TestServer;
    let clientId: string;
    before(async () => {
      server = await startTestServer(backend);
      clientId = (await server.client({ name: 'RP', redirect_uris: [REDIRECT_URI], scopes: ['openid'] }))
        .client.id;
    });
    after(async () => {
      await server?.close();
    });

    it('Core §3.1.2.1: scope values not understood are ignored (scope=openid address)', async () => {
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid address',
        state: 's',
      });
      const res = await server.http.request(`/authorize?${query.toString()}`);
      assert.equal(res.headers.location, undefined, `answered ${String(res.headers.location)}`);
      assert.equal(res.status, 200, 'the sign-in page, as for scope=openid');
    });
  });
}
