import type { FastifyInstance } from 'fastify';
import { viewAuditEvent } from '../../../../core/audit/audit-log.js';
import { ValidationError } from '../../../../core/validation.js';
import type { ApiContext } from '../context.js';
import {
  AuditEventList,
  AuditEventQuery,
  Problem as ProblemSchema,
  type AuditEventQueryString,
} from '../schemas.js';

const tags = ['audit-events'];
const errors = { '4xx': ProblemSchema };

/** RFC 3339 §5.6 date-time (upper or lower case T and Z, as §5.6's note allows). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch seconds of an RFC 3339 time; a ValidationError naming `field` otherwise. */
export function epochSecondsOf(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const millis = RFC3339.test(value) ? Date.parse(value.toUpperCase()) : Number.NaN;
  if (Number.isNaN(millis)) throw new ValidationError(field, 'must be an RFC 3339 date and time');
  return Math.floor(millis / 1000);
}

/** `type=a&type=b` and `type=a,b` alike. */
export function eventTypesOf(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return [value]
    .flat()
    .flatMap((part) => part.split(','))
    .map((type) => type.trim())
    .filter((type) => type !== '');
}

/** /v1/audit-events: the audit log, newest first, in cursor pages (scope admin; decision 41). */
export function registerAuditEventRoutes(api: FastifyInstance, context: ApiContext): void {
  const { audit } = context.engine;
  const admin = context.requireToken({ scopes: ['admin'] });

  api.get<{ Querystring: AuditEventQueryString }>(
    '/audit-events',
    {
      schema: {
        summary: 'List audit events',
        description:
          'Newest first. Each page answers `next_cursor` (and a `Link` header with rel="next") until the ' +
          'last; events recorded meanwhile are newer and never shift a later page. Filters: `type` ' +
          '(repeated or comma-separated), `user_id`, `client_id`, `since` and `until` (RFC 3339). An ' +
          'event never holds a secret, a password or a token.',
        tags,
        querystring: AuditEventQuery,
        response: { 200: AuditEventList, ...errors },
      },
      preValidation: admin,
    },
    async function listAuditEvents(request, reply) {
      const q = request.query;
      const limit = q.limit ?? 50;
      const { items, nextCursor } = await audit.list({
        types: eventTypesOf(q.type),
        userId: q.user_id,
        clientId: q.client_id,
        since: epochSecondsOf('since', q.since),
        until: epochSecondsOf('until', q.until),
        cursor: q.cursor,
        limit,
      });
      if (nextCursor !== undefined) {
        const next = new URL(`${context.issuer}/v1/audit-events`);
        for (const [name, value] of Object.entries(q)) {
          if (name === 'cursor' || value === undefined) continue;
          for (const one of [value].flat()) next.searchParams.append(name, String(one));
        }
        next.searchParams.set('cursor', nextCursor);
        // RFC 8288 §3: the next page, for clients that follow links rather than read the body.
        reply.header('link', `<${next.href}>; rel="next"`);
      }
      return { items: items.map(viewAuditEvent), next_cursor: nextCursor ?? null };
    },
  );
}
