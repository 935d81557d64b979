import type { AuditContext } from '../../../../core/audit/audit-log.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import { auditContextOf, isoTime, locationOf } from '../context.js';
import { notFound } from '../problem.js';
import {
  Problem as ProblemSchema,
  Scope as ScopeSchema,
  ScopeCreate,
  ScopeList,
  ScopeParams,
  ScopePatch,
  ScopeQuery,
  ScopeReplace,
  type ScopeCreateBody,
  type ScopePatchBody,
  type ScopeQueryString,
  type ScopeReplaceBody,
} from '../schemas.js';

const tags = ['scopes'];
const errors = { '4xx': ProblemSchema };

function viewScope(scope: Scope) {
  return { name: scope.name, description: scope.description, created_at: isoTime(scope.createdAt) };
}

/** /v1/scopes: the scope registry, with the descriptions the consent page shows (scope admin). */
export function registerScopeRoutes(api: FastifyInstance, context: ApiContext): void {
  const { scopes } = context.engine;
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(name: string): Promise<Scope> {
    const scope = await scopes.get(name);
    if (scope === undefined) throw notFound('scope', 'name');
    return scope;
  }

  /** PUT and PATCH: a new description, or the one it has. */
  async function describe(scope: Scope, description: string | undefined, audit: AuditContext) {
    return viewScope(await scopes.describe(scope.name, description ?? scope.description, audit));
  }

  api.get<{ Querystring: ScopeQueryString }>(
    '/scopes',
    {
      schema: {
        summary: 'List scopes',
        description: 'In name order, paged with `limit` and `offset`; `search` finds names containing it.',
        tags,
        querystring: ScopeQuery,
        response: { 200: ScopeList, ...errors },
      },
      preValidation: admin,
    },
    async function listScopes(request) {
      const { search, limit = 20, offset = 0 } = request.query;
      const { items, total } = await scopes.page({
        ...(search === undefined ? {} : { search }),
        limit,
        offset,
      });
      return { items: items.map(viewScope), total, limit, offset };
    },
  );

  api.post<{ Body: ScopeCreateBody }>(
    '/scopes',
    {
      schema: {
        summary: 'Register a scope',
        description: 'Without a description, the name stands as its description. A name in use answers 409.',
        tags,
        body: ScopeCreate,
        response: { 201: ScopeSchema, ...errors },
      },
      preValidation: admin,
    },
    async function createScope(request, reply) {
      const { name, description } = request.body;
      const scope = await scopes.create(name, description, auditContextOf(request));
      reply.code(201).header('location', locationOf(context, 'scopes', name));
      return viewScope(scope);
    },
  );

  api.get<{ Params: { name: string } }>(
    '/scopes/:name',
    {
      schema: {
        summary: 'Read a scope',
        tags,
        params: ScopeParams,
        response: { 200: ScopeSchema, ...errors },
      },
      preValidation: admin,
    },
    async function getScope(request) {
      return viewScope(await existing(request.params.name));
    },
  );

  api.put<{ Params: { name: string }; Body: ScopeReplaceBody }>(
    '/scopes/:name',
    {
      schema: {
        summary: 'Replace a scope’s description',
        tags,
        params: ScopeParams,
        body: ScopeReplace,
        response: { 201: ScopeSchema, ...errors },
      },
      preValidation: admin,
    },
    async function replaceScope(request, reply) {
      const result = await describe(
        await existing(request.params.name),
        request.body.description,
        auditContextOf(request),
      );
      reply.code(201);
      return result;
    },
  );

  api.patch<{ Params: { name: string }; Body: ScopePatchBody }>(
    '/scopes/:name',
    {
      schema: {
        summary: 'Change a scope’s description',
        tags,
        params: ScopeParams,
        body: ScopePatch,
        response: { 201: ScopeSchema, ...errors },
      },
      preValidation: admin,
    },
    async function patchScope(request, reply) {
      const result = await describe(
        await existing(request.params.name),
        request.body.description,
        auditContextOf(request),
      );
      reply.code(201);
      return result;
    },
  );

  api.delete<{ Params: { name: string } }>(
    '/scopes/:name',
    {
      schema: {
        summary: 'Delete a scope',
        description:
          'The built-in scopes (profile, admin, openid, email, offline_access) cannot be deleted (409).',
        tags,
        params: ScopeParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
      preValidation: admin,
    },
    async function deleteScope(request, reply) {
      await scopes.delete(request.params.name, auditContextOf(request));
      return reply.code(204).send();
    },
  );
}
