import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { viewResource } from '../../../../core/scopes/resource-registry.js';
import type { ResourceServer } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import { auditContextOf, locationOf } from '../context.js';
import { notFound } from '../problem.js';
import {
  Problem as ProblemSchema,
  Resource as ResourceSchema,
  ResourceCreate,
  ResourceList,
  ResourceParams,
  ResourcePatch,
  ResourceQuery,
  ResourceReplace,
  type ResourceCreateBody,
  type ResourcePatchBody,
  type ResourceQueryString,
  type ResourceReplaceBody,
} from '../schemas.js';

const tags = ['resources'];
const errors = { '4xx': ProblemSchema };

/**
 * /v1/resources: the resource servers a `resource` parameter may name (RFC 8707; scope admin). The
 * path names one by its URI as a single percent-encoded segment (encodeURIComponent), in any spelling
 * of it: `https%3A%2F%2Fapi.example%2F` finds `https://api.example`.
 */
export function registerResourceRoutes(api: FastifyInstance, context: ApiContext): void {
  const { resources } = context.engine;
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(uri: string): Promise<ResourceServer> {
    const resource = await resources.get(uri);
    if (resource === undefined) throw notFound('resource', 'uri');
    return resource;
  }

  api.get<{ Querystring: ResourceQueryString }>(
    '/resources',
    {
      schema: {
        summary: 'List resource servers',
        description:
          'In URI order, paged with `limit` and `offset`; `search` finds those whose URI or name contains it.',
        tags,
        querystring: ResourceQuery,
        response: { 200: ResourceList, ...errors },
      },
      preValidation: admin,
    },
    async function listResources(request) {
      const { search, limit = 20, offset = 0 } = request.query;
      const { items, total } = await resources.page({
        ...(search === undefined ? {} : { search }),
        limit,
        offset,
      });
      return { items: items.map(viewResource), total, limit, offset };
    },
  );

  api.post<{ Body: ResourceCreateBody }>(
    '/resources',
    {
      schema: {
        summary: 'Register a resource server',
        description:
          'A URI registered already (in any spelling), or the issuer’s own (always a resource), answers ' +
          '409. Location names the resource by its canonical URI.',
        tags,
        body: ResourceCreate,
        response: { 201: ResourceSchema, ...errors },
      },
      preValidation: admin,
    },
    async function createResource(request, reply) {
      const resource = await resources.create(request.body, auditContextOf(request));
      reply.code(201).header('location', locationOf(context, 'resources', resource.uri));
      return viewResource(resource);
    },
  );

  api.get<{ Params: { uri: string } }>(
    '/resources/:uri',
    {
      schema: {
        summary: 'Read a resource server',
        tags,
        params: ResourceParams,
        response: { 200: ResourceSchema, ...errors },
      },
      preValidation: admin,
    },
    async function getResource(request) {
      return viewResource(await existing(request.params.uri));
    },
  );

  api.put<{ Params: { uri: string }; Body: ResourceReplaceBody }>(
    '/resources/:uri',
    {
      schema: {
        summary: 'Replace a resource server’s name and scopes',
        description: 'A field left out takes its default: no name, any scope. The URI does not change.',
        tags,
        params: ResourceParams,
        body: ResourceReplace,
        response: { 201: ResourceSchema, ...errors },
      },
      preValidation: admin,
    },
    async function replaceResource(request, reply) {
      const result = await resources.replace(
        await existing(request.params.uri),
        request.body,
        auditContextOf(request),
      );
      reply.code(201);
      return viewResource(result);
    },
  );

  api.patch<{ Params: { uri: string }; Body: ResourcePatchBody }>(
    '/resources/:uri',
    {
      schema: {
        summary: 'Change a resource server’s name or scopes',
        tags,
        params: ResourceParams,
        body: ResourcePatch,
        response: { 201: ResourceSchema, ...errors },
      },
      preValidation: admin,
    },
    async function patchResource(request, reply) {
      const result = await resources.update(
        await existing(request.params.uri),
        request.body,
        auditContextOf(request),
      );
      reply.code(201);
      return viewResource(result);
    },
  );

  api.delete<{ Params: { uri: string } }>(
    '/resources/:uri',
    {
      schema: {
        summary: 'Delete a resource server',
        description:
          'Requests naming it are refused with invalid_target from then on; access tokens already ' +
          'issued for it stay valid until they expire.',
        tags,
        params: ResourceParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
      preValidation: admin,
    },
    async function deleteResource(request, reply) {
      await resources.delete(request.params.uri, auditContextOf(request));
      return reply.code(204).send();
    },
  );
}
