import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import { auditContextOf, locationOf } from '../context.js';
import {
  IdParams,
  InitialAccessToken as InitialAccessTokenSchema,
  InitialAccessTokenCreate,
  InitialAccessTokenCreated,
  InitialAccessTokenList,
  InitialAccessTokenQuery,
  Problem as ProblemSchema,
  type InitialAccessTokenCreateBody,
  type InitialAccessTokenQueryString,
} from '../schemas.js';

const tags = ['initial-access-tokens'];
const errors = { '4xx': ProblemSchema };

/**
 * /v1/initial-access-tokens: the RFC 7591 §3 initial access tokens that let clients register
 * themselves at /register when GATEHOUSE_DYNAMIC_REGISTRATION is `token` (scope admin; decision 20).
 * The token itself is in the creation's answer only: it is stored as its SHA-256, and every other
 * answer (and every audit event, decision 41) shows the view without it. The same registry as
 * `gatehouse initial-access-tokens`.
 */
export function registerInitialAccessTokenRoutes(api: FastifyInstance, context: ApiContext): void {
  const registry = context.engine.initialAccessTokens;
  const admin = context.requireToken({ scopes: ['admin'] });

  api.get<{ Querystring: InitialAccessTokenQueryString }>(
    '/initial-access-tokens',
    {
      schema: {
        summary: 'List initial access tokens',
        description:
          'Oldest first, paged with `limit` and `offset`; expired ones stay (marked `expired`) until the purge deletes them.',
        tags,
        querystring: InitialAccessTokenQuery,
        response: { 200: InitialAccessTokenList, ...errors },
      },
      preValidation: admin,
    },
    async function listInitialAccessTokens(request) {
      const { limit = 20, offset = 0 } = request.query;
      const { items, total } = await registry.page(limit, offset);
      return { items, total, limit, offset };
    },
  );

  api.post<{ Body: InitialAccessTokenCreateBody }>(
    '/initial-access-tokens',
    {
      schema: {
        summary: 'Make an initial access token',
        description:
          'Answers 201 with `initial_access_token`, shown this once. It registers any number of clients ' +
          'at /register (Authorization: Bearer) until it expires or is deleted; the server takes it only ' +
          'while GATEHOUSE_DYNAMIC_REGISTRATION is `token` or `open`.',
        tags,
        body: InitialAccessTokenCreate,
        response: { 201: InitialAccessTokenCreated, ...errors },
      },
      preValidation: admin,
    },
    async function createInitialAccessToken(request, reply) {
      const { expires_in: expiresIn, scopes } = request.body;
      const { token, view } = await registry.create(
        { ...(expiresIn === undefined ? {} : { expiresIn }), ...(scopes === undefined ? {} : { scopes }) },
        auditContextOf(request),
      );
      reply.code(201).header('location', locationOf(context, 'initial-access-tokens', view.id));
      return { ...view, initial_access_token: token };
    },
  );

  api.get<{ Params: { id: string } }>(
    '/initial-access-tokens/:id',
    {
      schema: {
        summary: 'Read an initial access token',
        description: 'Its settings and use, never the token.',
        tags,
        params: IdParams,
        response: { 200: InitialAccessTokenSchema, ...errors },
      },
      preValidation: admin,
    },
    async function getInitialAccessToken(request) {
      return registry.get(request.params.id);
    },
  );

  api.delete<{ Params: { id: string } }>(
    '/initial-access-tokens/:id',
    {
      schema: {
        summary: 'Delete an initial access token',
        description: 'It registers nothing more; the clients it registered stay.',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
      preValidation: admin,
    },
    async function deleteInitialAccessToken(request, reply) {
      await registry.delete(request.params.id, auditContextOf(request));
      return reply.code(204).send();
    },
  );
}
