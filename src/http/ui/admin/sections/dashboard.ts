import { items, num } from '../admin-api.js';
import type { ConsoleRouter } from '../console-router.js';
import { dashboardPage } from '../../pages/admin/dashboard-page.js';
import { sendPage } from '../../ui-context.js';
import { keyView } from './signing-keys.js';

export function registerDashboard(router: ConsoleRouter): void {
  router.page(router.adminPath, async (request, reply, c) => {
    const [keys, clients, users] = await Promise.all([
      c.api.get('/signing-keys'),
      c.api.get('/clients?limit=1'),
      c.api.get('/users?limit=1'),
    ]);
    if (keys.status !== 200) return router.failed(request, reply, c, keys, 'dashboard');
    return sendPage(
      reply,
      200,
      dashboardPage(c.frame, {
        keys: items(keys.body).map(keyView),
        clients: num(clients.body, 'total'),
        users: num(users.body, 'total'),
        now: router.now(),
      }),
    );
  });
}
