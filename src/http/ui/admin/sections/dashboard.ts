import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { num } from '../admin-api.js';
import type { ConsoleRouter } from '../console-router.js';
import {
  dashboardPage,
  type DashboardAssets,
  type DashboardStatistics,
} from '../../pages/admin/dashboard-page.js';
import { sendPage } from '../../ui-context.js';

const require = createRequire(import.meta.url);

/** uPlot's own files, as the package ships them (decision 43): served from the issuer's origin. */
function uplotFile(name: string): string {
  return readFileSync(require.resolve(`uplot/dist/${name}`), 'utf8');
}

/** The dashboard's script, as tsc compiled it beside this module's folder (source map left out). */
function dashboardScript(): string {
  const source = readFileSync(new URL('../../browser/dashboard.js', import.meta.url), 'utf8');
  return source.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
}

/**
 * The dashboard (decision 43): the last hour's figures of every process and the state of things, from
 * GET /v1/statistics. The page is whole without script (a table per chart, the state table); its one
 * script draws the charts with uPlot and fetches the figures again from `<admin>/statistics`, the same
 * /v1 answer passed through, while the page is open.
 */
export function registerDashboard(router: ConsoleRouter): void {
  const version = (require('uplot/package.json') as { version: string }).version;
  const script = 'text/javascript; charset=utf-8';
  const assets: DashboardAssets = {
    script: router.asset('dashboard', script, dashboardScript()),
    uplotScript: router.asset(`uplot-${version}`, script, uplotFile('uPlot.iife.min.js')),
    uplotStyle: router.asset(`uplot-${version}-style`, 'text/css; charset=utf-8', uplotFile('uPlot.min.css')),
    source: `${router.adminPath}/statistics`,
  };

  router.page(router.adminPath, async (request, reply, c) => {
    const [statistics, clients, users] = await Promise.all([
      c.api.get('/statistics'),
      c.api.get('/clients?limit=1'),
      c.api.get('/users?limit=1'),
    ]);
    if (statistics.status !== 200) return router.failed(request, reply, c, statistics, 'dashboard');
    return sendPage(
      reply,
      200,
      dashboardPage(c.frame, {
        statistics: statistics.body as DashboardStatistics,
        clients: num(clients.body, 'total'),
        users: num(users.body, 'total'),
        assets,
      }),
    );
  });

  // The script's figures: /v1/statistics as it answered, for this signed-in administrator.
  router.page(assets.source, async (request, reply, c) => {
    const statistics = await c.api.get('/statistics');
    if (statistics.status !== 200) {
      return reply
        .code(statistics.status)
        .header('cache-control', 'no-store')
        .type('application/problem+json')
        .send(JSON.stringify(statistics.body ?? {}));
    }
    return reply
      .header('cache-control', 'no-store')
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(statistics.body));
  });
}
