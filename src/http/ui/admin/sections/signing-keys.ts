import { items } from '../admin-api.js';
import type { ConsoleRouter } from '../console-router.js';
import { confirmRevokeKeyPage, signingKeysPage, type KeyView } from '../../pages/admin/signing-keys-pages.js';
import { str } from '../admin-api.js';
import { sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'key-rotated': 'A new signing key is active.',
  'key-revoked': 'The key was revoked.',
};

export function keyView(value: unknown): KeyView {
  return {
    kid: str(value, 'kid'),
    alg: str(value, 'alg'),
    status: str(value, 'status'),
    createdAt: str(value, 'created_at'),
    retiredAt: str(value, 'retired_at'),
    revokedAt: str(value, 'revoked_at'),
  };
}

export function registerSigningKeys(router: ConsoleRouter): void {
  router.page(`${router.adminPath}/signing-keys`, async (request, reply, c) => {
    const answer = await c.api.get('/signing-keys');
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'signing-keys');
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      signingKeysPage(c.frame, {
        keys: items(answer.body).map(keyView),
        now: router.now(),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  router.action(
    `${router.adminPath}/signing-keys/rotate`,
    () => `${router.adminPath}/signing-keys`,
    async (request, reply, c) => {
      const answer = await c.api.request('POST', '/signing-keys');
      if (answer.status !== 201) return router.failed(request, reply, c, answer, 'signing-keys');
      return router.see(reply, `${router.adminPath}/signing-keys`, 'key-rotated');
    },
  );

  const revokePath = `${router.adminPath}/signing-keys/:kid/revoke`;
  router.page(revokePath, async (request, reply, c) => {
    const answer = await c.api.get(`/signing-keys/${encodeURIComponent(router.param(request, 'kid'))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'signing-keys');
    return sendPage(reply, 200, confirmRevokeKeyPage(c.frame, keyView(answer.body)));
  });

  router.action(
    revokePath,
    () => `${router.adminPath}/signing-keys`,
    async (request, reply, c) => {
      const answer = await c.api.request(
        'POST',
        `/signing-keys/${encodeURIComponent(router.param(request, 'kid'))}/revoke`,
      );
      if (answer.status !== 201) return router.failed(request, reply, c, answer, 'signing-keys');
      return router.see(reply, `${router.adminPath}/signing-keys`, 'key-revoked');
    },
  );
}
