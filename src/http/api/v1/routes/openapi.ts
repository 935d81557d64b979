import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { negotiate } from '../../../content-negotiation.js';
import { finishDocument } from '../openapi-document.js';
import { renderReference, REFERENCE_STYLESHEET } from '../openapi-html.js';
import { Problem, sendProblem } from '../problem.js';

const JSON_TYPE = 'application/json';
const OPENAPI_TYPE = 'application/vnd.oai.openapi+json';
const HTML_TYPE = 'text/html';

// No script, no external asset: the page's one stylesheet is allowed by its hash.
const STYLE_HASH = createHash('sha256').update(REFERENCE_STYLESHEET).digest('base64');
const CSP = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * GET /v1/openapi: the OpenAPI 3.1 document of /v1 as JSON, or as a reference page for a browser,
 * chosen by Accept (no format suffix on any path). Public: reading the manual needs no token.
 */
export function registerOpenApiRoute(api: FastifyInstance): void {
  let document: Record<string, unknown> | undefined;
  let html: string | undefined;
  api.get(
    '/openapi',
    // Left out of the document it serves: it is the document, not a resource of the API.
    { schema: { hide: true } },
    async function openapi(request, reply) {
      document ??= finishDocument(api.swagger() as unknown as Record<string, unknown>);
      reply.header('vary', 'accept');
      reply.header('cache-control', 'no-cache');
      const type = negotiate(request.headers.accept, [JSON_TYPE, OPENAPI_TYPE, HTML_TYPE]);
      if (type === undefined) {
        return sendProblem(
          reply,
          new Problem(406, `ask for ${JSON_TYPE} or ${HTML_TYPE}`, { field: 'accept' }),
        );
      }
      if (type === HTML_TYPE) {
        html ??= renderReference(document);
        reply.header('content-security-policy', CSP);
        reply.header('x-frame-options', 'DENY');
        reply.type('text/html; charset=utf-8');
        return html;
      }
      reply.type(type);
      return JSON.stringify(document);
    },
  );
}
