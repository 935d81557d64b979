import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestHasBody } from './mac.js';
import { dpopHeaderValues, isForm, metadataResponse, refusalFor } from './respond.js';
import type { AuthenticationRequirements } from './rfc6750.js';
import {
  ResourceServer,
  type RequestInfo,
  type ResourceServerOptions,
  type VerifiedToken,
} from './resource-server.js';

/** The parts of an Express/Connect request the middleware reads (no dependency on Express types). */
export interface ConnectRequest extends IncomingMessage {
  body?: unknown;
  query?: unknown;
  protocol?: string;
  originalUrl?: string;
  rawBody?: Buffer;
  accessToken?: VerifiedToken;
}

export interface ConnectResponse extends ServerResponse {
  locals?: Record<string, unknown>;
}

export type NextFunction = (error?: unknown) => void;
export type ConnectMiddleware = (req: ConnectRequest, res: ConnectResponse, next: NextFunction) => void;

function requestInfo(req: ConnectRequest): RequestInfo {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  return {
    method: req.method ?? 'GET',
    // Express rewrites req.url inside routers; the URL as sent is originalUrl.
    url: req.originalUrl ?? req.url ?? '/',
    host: req.headers.host ?? '',
    protocol: req.protocol === 'https' || encrypted ? 'https' : 'http',
    authorization: req.headers.authorization,
    formBody:
      isForm(req.headers['content-type']) && typeof req.body === 'object' && req.body !== null
        ? (req.body as Record<string, unknown>)
        : undefined,
    query:
      typeof req.query === 'object' && req.query !== null
        ? (req.query as Record<string, unknown>)
        : Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams),
    rawBody: req.rawBody,
    hasBody: requestHasBody(req.headers),
    dpop: dpopHeaderValues(req.rawHeaders),
  };
}

/**
 * Express/Connect middleware factory: `const rs = expressResourceServer({ issuer })`, then
 * `app.get('/notes', rs.requireToken(['notes:read']), handler)`; the handler finds
 * `req.accessToken` (and `res.locals.accessToken`). A form-body token needs a urlencoded body
 * parser before it; MAC tokens need the `mac.origin` option, and a `bodyhash` over a request body
 * needs `req.rawBody` (e.g. from the parser's verify hook). With the `resource` option,
 * `app.use(rs.protectedResourceMetadata())` serves the RFC 9728 metadata.
 */
export function expressResourceServer(options: ResourceServerOptions | { resourceServer: ResourceServer }) {
  const server = 'resourceServer' in options ? options.resourceServer : new ResourceServer(options);
  return {
    resourceServer: server,
    /**
     * Admits a request only with a valid token holding every scope given and, with `requirements`, a
     * sign-in that meets them (RFC 9470 §3: `acr` one of a list, `maxAge` in seconds), else 401
     * insufficient_user_authentication with the challenge a client steps up by.
     */
    requireToken(
      scopes: readonly string[] = [],
      requirements: AuthenticationRequirements = {},
    ): ConnectMiddleware {
      return function checkToken(req, res, next) {
        server.authorize(requestInfo(req), scopes, requirements).then(
          (token) => {
            req.accessToken = token;
            // RFC 9449 §9: the nonce to use next, when the service asks for nonces.
            if (token.dpopNonce !== undefined) res.setHeader('dpop-nonce', token.dpopNonce);
            if (res.locals !== undefined) res.locals.accessToken = token;
            next();
          },
          (error: unknown) => {
            const refusal = refusalFor(
              error,
              server.realm,
              server.protectedResource?.metadataUrl,
              server.dpopAlgorithms,
            );
            if (refusal === undefined) return next(error);
            res.statusCode = refusal.status;
            for (const [name, value] of Object.entries(refusal.headers)) res.setHeader(name, value);
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify(refusal.body));
          },
        );
      };
    },
    /**
     * A middleware that answers GET and HEAD at the RFC 9728 metadata's well-known paths and passes
     * every other request on: `app.use(tokens.protectedResourceMetadata())`. Needs the `resource` option.
     */
    protectedResourceMetadata(): ConnectMiddleware {
      const resource = server.protectedResource;
      if (resource === undefined) {
        throw new Error('protectedResourceMetadata needs the resource option (RFC 9728)');
      }
      const paths = new Set(resource.metadataPaths);
      return function protectedResourceMetadata(req, res, next) {
        const path = new URL(req.originalUrl ?? req.url ?? '/', 'http://x').pathname;
        if (!paths.has(path) || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
        const { headers, body } = metadataResponse(resource.metadata());
        res.statusCode = 200;
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
        res.setHeader('content-length', String(Buffer.byteLength(body)));
        res.end(req.method === 'HEAD' ? undefined : body);
      };
    },
    close(): void {
      server.close();
    },
  };
}
