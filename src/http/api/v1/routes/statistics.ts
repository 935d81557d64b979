import type { FastifyInstance } from 'fastify';
import { signingKeyStatus } from '../../../../core/keys/signing-key-registry.js';
import type { Statistics } from '../../../../core/ops/statistics.js';
import type { ApiContext } from '../context.js';
import { isoTime } from '../context.js';
import { Problem as ProblemSchema, Statistics as StatisticsSchema } from '../schemas.js';

/**
 * GET /v1/statistics (scope admin; decision 43): the last hour per minute, summed over every process
 * of the deployment, and the state of things. What the console's dashboard draws.
 */
export function registerStatisticsRoutes(
  api: FastifyInstance,
  context: ApiContext,
  statistics: Statistics,
): void {
  api.get(
    '/statistics',
    {
      schema: {
        summary: 'The last hour’s figures of every process, and the state of the deployment',
        description:
          'Per minute, summed over every Gatehouse process on this store: token responses by grant type, ' +
          'sign-ins, failed sign-ins, lockouts, errors by code, requests and latency quantiles (from the ' +
          'processes’ histogram buckets merged). Each process writes its figures every 15 seconds, so ' +
          'the current minute is up to 15 seconds behind. Then the state of things: live sessions, ' +
          'signing keys and their age, migrations not applied, the served TLS certificate’s expiry and ' +
          'the purge’s backlog.',
        tags: ['statistics'],
        response: { 200: StatisticsSchema, '4xx': ProblemSchema },
      },
      preValidation: context.requireToken({ scopes: ['admin'] }),
    },
    async function readStatistics() {
      const report = await statistics.read();
      const { figures } = report;
      return {
        at: isoTime(report.at),
        minutes: figures.minutes.map(isoTime),
        processes: figures.processes,
        token_responses: figures.counts.token_responses,
        sign_ins: figures.counts.sign_ins[''] ?? figures.minutes.map(() => 0),
        failed_sign_ins: figures.counts.failed_sign_ins[''] ?? figures.minutes.map(() => 0),
        lockouts: figures.counts.lockouts[''] ?? figures.minutes.map(() => 0),
        errors: figures.counts.errors,
        requests: figures.requests,
        latency_ms: figures.latencyMs,
        active_sessions: report.activeSessions,
        active_sessions_per_minute: figures.activeSessions,
        signing_keys: report.signingKeys.map((key) => ({
          kid: key.kid,
          alg: key.alg,
          status: signingKeyStatus(key),
          created_at: isoTime(key.createdAt),
          age_seconds: report.at - key.createdAt,
        })),
        pending_migrations: report.pendingMigrations,
        tls_certificate:
          report.certificate === undefined
            ? null
            : {
                subject: report.certificate.subject,
                not_after: isoTime(report.certificate.notAfter),
                expires_in_seconds: report.certificate.notAfter - report.at,
              },
        purge_backlog: report.purgeBacklog,
        count_limit: report.countLimit,
      };
    },
  );
}
