import { items, str } from '../admin-api.js';
import type { ConsoleRouter } from '../console-router.js';
import { auditPage, type AuditRow } from '../../pages/admin/audit-page.js';
import { sendPage } from '../../ui-context.js';

export function registerAuditLog(router: ConsoleRouter): void {
  router.page(`${router.adminPath}/audit`, async (request, reply, c) => {
    const type = router.query(request, 'type').trim();
    const cursor = router.query(request, 'cursor');
    const params = new URLSearchParams({ limit: '50' });
    if (type !== '') params.set('type', type);
    if (cursor !== '') params.set('cursor', cursor);
    const answer = await c.api.get(`/audit-events?${params.toString()}`);
    if (answer.status === 404) {
      return sendPage(reply, 200, auditPage(c.frame, { available: false, rows: [], type }));
    }
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'audit');
    const nextCursor = str(answer.body, 'next_cursor');
    return sendPage(
      reply,
      200,
      auditPage(c.frame, {
        available: true,
        type,
        rows: items(answer.body).map(auditRow),
        ...(nextCursor !== '' ? { nextCursor } : {}),
      }),
    );
  });
}

/**
}

 * client, or the command line), on what (the client or user it concerns, and its detail), from where.
 */
function auditRow(event: Record<string, unknown>): AuditRow {
  const actor = typeof event.actor === 'object' && event.actor !== null ? event.actor : undefined;
  const actorType = str(actor, 'type');
  const on = [
    str(event, 'client_id') && `client ${str(event, 'client_id')}`,
    str(event, 'user_id') && `user ${str(event, 'user_id')}`,
  ]
    .filter((part) => part !== '')
    .join(', ');
  return {
    time: str(event, 'at'),
    type: str(event, 'type'),
    actor: actorType === 'cli' ? 'command line' : actorType === '' ? '' : `${actorType} ${str(actor, 'id')}`,
    target: [on, str(event, 'detail')].filter((part) => part !== '').join(': '),
    address: str(event, 'address'),
  };
}
