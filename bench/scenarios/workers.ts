import { RATE_LIMITS_OFF } from '../lib/rate-limits.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import type { Scenario } from '../lib/types.js';

/**
 * (e) `serve --workers 2` next to 1 worker (a target in docs/benchmarks.md), client_credentials on SQLite. Neither is pinned:
 * the two workers need both cores, so they share core 1 with the load driver; the figure to read is
 * the 2-vs-1 ratio, measured under the same handicap. Rate limits are off here: counted on SQLite, every
 * request waits for an fsync'd write that both workers serialise on, which would hide the CPU scaling.
 */
export const workersScenario: Scenario = {
  id: 'workers',
  title: 'client_credentials, --workers 2 vs 1 (unpinned)',
  async run(context) {
    const request = clientCredentialsRequest(context.clients.clientCredentials);
    // The pinned server holds core 0 idle meanwhile; it answers nothing during these runs.
    const one = await context.startGatehouse({
      label: 'gatehouse-1-worker',
      cpus: undefined,
      workers: 1,
      env: RATE_LIMITS_OFF,
    });
    const [single] = await context.measure(one, [request]).finally(() => one.stop());
    const two = await context.startGatehouse({
      label: 'gatehouse-2-workers',
      cpus: undefined,
      workers: 2,
      env: RATE_LIMITS_OFF,
    });
    const [double] = await context.measure(two, [request]).finally(() => two.stop());
    const failures = [single!, double!].reduce((n, r) => n + r.non2xx + r.warmupNon2xx + r.errors, 0);
    return {
      rows: [
        {
          scenario: 'workers',
          label: 'client_credentials, SQLite, 1 worker, unpinned, rate limits off',
          result: single!,
          compare: '1.00 x (1 worker)',
        },
        {
          scenario: 'workers',
          label: 'client_credentials, SQLite, 2 workers, unpinned, rate limits off',
          result: double!,
          compare: `${(double!.rps / single!.rps).toFixed(2)} x 1 worker`,
        },
      ],
      targets: [
        {
          name: 'client_credentials, 2 workers next to 1 worker (rate limits off)',
          target: 'reported (no threshold; 2.0 is linear)',
          judge: () => ({
            measured:
              `${(double!.rps / single!.rps).toFixed(2)} x 1 worker ` +
              `(${Math.round(double!.rps).toLocaleString('en')} vs ${Math.round(single!.rps).toLocaleString('en')}/s; ` +
              `server CPU ${double!.serverCpu.toFixed(2)} vs ${single!.serverCpu.toFixed(2)} cores, ` +
              `driver ${double!.driverCpu.toFixed(2)})`,
            pass: true,
            reported: true,
          }),
        },
      ],
      checks: [
        {
          name: 'workers: every response 200',
          pass: failures === 0,
          detail: `${single!.requests + double!.requests} responses, ${failures} failures`,
        },
      ],
      notes: [
        'workers: not pinned (taskset gives them both cores); the load driver shares core 1 with them, ' +
          'so 2 workers cannot reach 2x here; on a machine with spare cores for the driver they would scale further.',
      ],
    };
  },
};
