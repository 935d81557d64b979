import type { ServerProcess } from '../lib/processes.js';
import { bareRequest } from '../lib/token-requests.js';
import type { BenchContext, Scenario, ScenarioOutcome } from '../lib/types.js';

/**
 * (a) The peer: bare Fastify on the same core, certificate and transport. run.ts measures it before,
 * between and after the scenarios; each scenario's ratios use the bare runs on either side of it.
 */
export function bareScenario(peer: () => ServerProcess, when: string): Scenario {
  return {
    id: 'bare',
    title: 'bare Fastify route, fixed token-shaped JSON (the peer)',
    async run(context: BenchContext): Promise<ScenarioOutcome> {
      const [result] = await context.measure(peer(), [bareRequest(context.clients.clientCredentials)]);
      return {
        rows: [
          {
            scenario: 'bare',
            label: `bare Fastify, 1 core (${when})`,
            result: result!,
            baseline: true,
          },
        ],
        checks: [
          {
            name: `bare Fastify (${when}): every response 200`,
            pass: result!.non2xx === 0 && result!.errors === 0,
            detail: `${result!.requests} responses, ${result!.non2xx} non-2xx, ${result!.errors} errors`,
          },
        ],
      };
    },
  };
}
