import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  userToken,
  type ApiClient,
} from '../helpers/api-requests.js';
import { MAILS_PER_USER_PER_HOUR } from '../../src/core/users/account-mail.js';

interface SessionBody {
  id: string;
  user_agent: string | null;
  address: string | null;
  created_at: string;
  last_active_at: string;
}
interface EventBody {
  type: string;
  actor: { type: string; id: string | null } | null;
  user_id: string | null;
  address: string | null;
  detail: string | null;
}

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/**
 * Issue 30, point 2: an operator's hands on a user's security over /v1 (sessions, second factors, a
 * reset link by mail), each change recorded with it (decision 41), reusing the security page's and the
 * command line's rules (decisions 34, 35, 37).
 */
for (const backend of backends()) {
  describe(`/v1/users/{id} sessions, second factors and reset links (${backend})`, () => {
    let server: TestServer;
    let smtp: TestSmtpServer;
    let api: ApiClient;
    let adminClientId: string;
    before(async () => {
      smtp = await startSmtpServer();
      server = await startTestServer(backend, { smtpUrl: smtp.url });
      const admin = await clientCredentialsToken(server, ['admin']);
      adminClientId = admin.client.id;
      api = apiClient(server, admin.token);
    });
    after(async () => {
      await server?.close();
      await smtp?.close();
    });

    const events = async (userId: string, type: string): Promise<EventBody[]> => {
      const res = await api.get(`/audit-events?user_id=${userId}&type=${type}&limit=50`);
      expectStatus(res, 200);
      return (res.json as { items: EventBody[] }).items;
    };
    const signInAt = (userId: string, userAgent?: string) =>
      server.gatehouse.engine.browserSessions.start(
        userId,
        { method: 'password', at: server.clock.now() },
        { userAgent, address: '203.0.113.9' },
      );

    it('lists a user’s sessions and signs them out, one or all, each recorded', async () => {
      const { user } = await server.user();
      const { user: other } = await server.user();
      const first = await signInAt(user.id, CHROME);
      // Oldest first: a second later, so the order is the list's, not the store's tie-break.
      server.clock.advance(1);
      await signInAt(user.id);
      const otherBrowser = await signInAt(other.id);
      const listed = await api.get(`/users/${user.id}/sessions`);
      expectStatus(listed, 200);
      const items = (listed.json as { items: SessionBody[] }).items;
      assert.equal(items.length, 2);
      assert.deepEqual(Object.keys(items[0]!).sort(), [
        'address',
        'created_at',
        'id',
        'last_active_at',
        'user_agent',
      ]);
      assert.equal(items[0]!.user_agent, CHROME);
      assert.equal(items[0]!.address, '203.0.113.9');
      assert.equal(items[1]!.user_agent, null);
      // The id is the `sid`, never the cookie or its stored hash.
      assert.ok(!JSON.stringify(listed.json).includes(first));

      // Another user's session is not found under this user, and stays.
      const theirs = (await server.gatehouse.engine.browserSessions.list(other.id, undefined))[0]!;
      assertProblem(await api.delete(`/users/${user.id}/sessions/${theirs.sid}`), 404, 'sid');
      assert.equal((await server.gatehouse.engine.browserSessions.user(otherBrowser))?.id, other.id);

      expectStatus(await api.delete(`/users/${user.id}/sessions/${items[0]!.id}`), 204);
      assert.equal(await server.gatehouse.engine.browserSessions.user(first), undefined);
      assert.equal(
        ((await api.get(`/users/${user.id}/sessions`)).json as { items: unknown[] }).items.length,
        1,
      );
      assertProblem(await api.delete(`/users/${user.id}/sessions/${items[0]!.id}`), 404, 'sid');

      expectStatus(await api.delete(`/users/${user.id}/sessions`), 204);
      assert.deepEqual((await api.get(`/users/${user.id}/sessions`)).json, { items: [] });
      assert.equal((await server.gatehouse.engine.browserSessions.user(otherBrowser))?.id, other.id);

      const ended = await events(user.id, 'session.ended');
      assert.equal(ended.length, 2);
      for (const event of ended) {
        assert.deepEqual(event.actor, { type: 'client', id: adminClientId });
        assert.equal(typeof event.address, 'string');
      }
      assert.ok(ended.some((event) => event.detail === `sid ${items[0]!.id}`));
      assert.ok(ended.some((event) => event.detail === 'all: 1 session(s)'));
      assertProblem(await api.get('/users/no-such-user/sessions'), 404, 'id');
      assertProblem(await api.delete('/users/no-such-user/sessions'), 404, 'id');
    });

    it('DELETE second-factors removes the app and the recovery codes (as users reset-mfa), recorded', async () => {
      const { user } = await server.user();
      const { secondFactors } = server.gatehouse.engine;
      assert.ok(await secondFactors.beginTotp(user));
      const codes = await secondFactors.generateRecoveryCodes(user.id);
      assert.equal((await secondFactors.status(user.id)).recoveryCodesLeft, codes.length);
      expectStatus(await api.delete(`/users/${user.id}/second-factors`), 204);
      assert.deepEqual(await secondFactors.status(user.id), { totp: false, recoveryCodesLeft: 0 });
      const [reset] = await events(user.id, 'second-factor.reset');
      assert.deepEqual(reset?.actor, { type: 'client', id: adminClientId });
      for (const code of codes) assert.ok(!JSON.stringify(reset).includes(code));
      // Nothing left: answered the same, and nothing more recorded.
      expectStatus(await api.delete(`/users/${user.id}/second-factors`), 204);
      assert.equal((await events(user.id, 'second-factor.reset')).length, 1);
      assertProblem(await api.delete('/users/no-such-user/second-factors'), 404, 'id');
    });

    it('POST password-resets mails the user a working link (202); no address is 409, too many 429', async () => {
      const { user, password } = await server.user();
      assertProblem(await api.post(`/users/${user.id}/password-resets`), 409, 'email');
      assert.deepEqual(await events(user.id, 'password.reset-link-sent'), []);
      expectStatus(await api.patch(`/users/${user.id}`, { email: 'Reset.Me@example.com' }), 201);

      const mailsBefore = smtp.mails.length;
      const started = await api.post(`/users/${user.id}/password-resets`);
      expectStatus(started, 202);
      assert.deepEqual(started.json, { email: 'Reset.Me@example.com', expires_in: 1800 });
      const mail = await smtp.mail(mailsBefore);
      assert.equal(mail.to && 'text' in mail.to ? mail.to.text : '', 'Reset.Me@example.com');
      assert.match(mail.text ?? '', /An administrator/);
      const link = /https:\/\/\S+\/password-reset\?token=(\S+)/.exec(mail.text ?? '');
      assert.ok(link, mail.text);
      const token = link[1]!;

      // Nothing changed yet: the old password still works until the link is followed.
      const stillWorks = await server.gatehouse.engine.signIn({
        username: user.username,
        password,
        address: '198.51.100.1',
      });
      assert.equal(stillWorks.outcome, 'signed-in');
      const reset = await server.gatehouse.engine.accountMail.resetPassword(token, 'a brand new password');
      assert.equal(reset.outcome, 'reset');

      const [event] = await events(user.id, 'password.reset-link-sent');
      assert.deepEqual(event?.actor, { type: 'client', id: adminClientId });
      assert.equal(event?.detail, 'to Reset.Me@example.com');
      assert.ok(!JSON.stringify(await events(user.id, 'password.reset-link-sent')).includes(token));

      // The hourly allowance of decision 35 holds for operators too.
      for (let sent = 1; sent < MAILS_PER_USER_PER_HOUR; sent++) {
        expectStatus(await api.post(`/users/${user.id}/password-resets`), 202);
      }
      const refused = await api.post(`/users/${user.id}/password-resets`);
      assertProblem(refused, 429);
      assert.equal(refused.headers['retry-after'], '3600');
      assertProblem(await api.post('/users/no-such-user/password-resets'), 404, 'id');
      await server.gatehouse.engine.accountMail.idle();
    });

    it('a token without admin manages none of it', async () => {
      const { user, token } = await userToken(server, ['profile']);
      const plain = apiClient(server, token);
      expectStatus(await plain.get(`/users/${user.id}/sessions`), 403);
      expectStatus(await plain.delete(`/users/${user.id}/sessions`), 403);
      expectStatus(await plain.delete(`/users/${user.id}/second-factors`), 403);
      expectStatus(await plain.post(`/users/${user.id}/password-resets`), 403);
    });
  });
}
