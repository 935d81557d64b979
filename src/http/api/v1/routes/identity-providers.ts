import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { IdentityProvider } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import { auditContextOf, locationOf } from '../context.js';
import { notFound } from '../problem.js';
import {
  IdParams,
  IdentityProvider as IdentityProviderSchema,
  IdentityProviderCreate,
  IdentityProviderList,
  IdentityProviderPatch,
  IdentityProviderQuery,
  IdentityProviderReplace,
  Problem as ProblemSchema,
  type IdentityProviderCreateBody,
  type IdentityProviderPatchBody,
  type IdentityProviderQueryString,
  type IdentityProviderReplaceBody,
} from '../schemas.js';

const tags = ['identity-providers'];
const errors = { '4xx': ProblemSchema };

/**
 * /v1/identity-providers: upstream identity providers as data (scope admin, decision 39). The client
 * secret is write-only: answers say only whether one is set.
 */
export function registerIdentityProviderRoutes(api: FastifyInstance, context: ApiContext): void {
  const registry = context.engine.identityProviders;
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(id: string): Promise<IdentityProvider> {
    const provider = await registry.get(id);
    if (provider === undefined) throw notFound('identity provider');
    return provider;
  }

  api.get<{ Querystring: IdentityProviderQueryString }>(
    '/identity-providers',
    {
      schema: {
        summary: 'List identity providers',
        description: 'In name order, paged with `limit` and `offset`.',
        tags,
        querystring: IdentityProviderQuery,
        response: { 200: IdentityProviderList, ...errors },
      },
      preValidation: admin,
    },
    async function listIdentityProviders(request) {
      const { limit = 20, offset = 0 } = request.query;
      const { items, total } = await registry.list(limit, offset);
      return { items: items.map((provider) => registry.view(provider)), total, limit, offset };
    },
  );

  api.post<{ Body: IdentityProviderCreateBody }>(
    '/identity-providers',
    {
      schema: {
        summary: 'Add an identity provider',
        description:
          'An OpenID Provider (`issuer`) is looked up by discovery first: a failed discovery answers 400 ' +
          'naming `issuer`, with why. Answers 201 with the provider, its Location and its `redirect_uri` ' +
          '(to register at the provider); a private_key_jwt provider’s `public_jwk` is to register there ' +
          'too. An id taken answers 409.',
        tags,
        body: IdentityProviderCreate,
        response: { 201: IdentityProviderSchema, ...errors },
      },
      preValidation: admin,
    },
    async function createIdentityProvider(request, reply) {
      const provider = await registry.create(request.body, auditContextOf(request));
      reply.code(201).header('location', locationOf(context, 'identity-providers', provider.id));
      return registry.view(provider);
    },
  );

  api.get<{ Params: { id: string } }>(
    '/identity-providers/:id',
    {
      schema: {
        summary: 'Read an identity provider',
        tags,
        params: IdParams,
        response: { 200: IdentityProviderSchema, ...errors },
      },
      preValidation: admin,
    },
    async function getIdentityProvider(request) {
      return registry.view(await existing(request.params.id));
    },
  );

  api.put<{ Params: { id: string }; Body: IdentityProviderReplaceBody }>(
    '/identity-providers/:id',
    {
      schema: {
        summary: 'Replace an identity provider',
        description:
          'Send the complete provider (without `id`, which never changes); a field left out takes the ' +
          'default it would take at creation, but the write-only `client_secret` left out is kept. A ' +
          'new issuer is discovered again.',
        tags,
        params: IdParams,
        body: IdentityProviderReplace,
        response: { 201: IdentityProviderSchema, ...errors },
      },
      preValidation: admin,
    },
    async function replaceIdentityProvider(request, reply) {
      const provider = await registry.replace(
        await existing(request.params.id),
        request.body,
        auditContextOf(request),
      );
      reply.code(201);
      return registry.view(provider);
    },
  );

  api.patch<{ Params: { id: string }; Body: IdentityProviderPatchBody }>(
    '/identity-providers/:id',
    {
      schema: {
        summary: 'Change some fields of an identity provider',
        description:
          'The fields given change, the others stay; `claim_mapping` is merged into the present one. ' +
          'A `client_secret` given to a provider without one makes it client_secret_basic; an issuer ' +
          'given makes it an OpenID Provider (discovered now), the three endpoints a plain OAuth 2.0 one.',
        tags,
        params: IdParams,
        body: IdentityProviderPatch,
        response: { 201: IdentityProviderSchema, ...errors },
      },
      preValidation: admin,
    },
    async function patchIdentityProvider(request, reply) {
      const provider = await registry.update(
        await existing(request.params.id),
        request.body,
        auditContextOf(request),
      );
      reply.code(201);
      return registry.view(provider);
    },
  );

  api.delete<{ Params: { id: string } }>(
    '/identity-providers/:id',
    {
      schema: {
        summary: 'Delete an identity provider',
        description:
          'Every user’s link through it goes with it (those users no longer sign in through it), and ' +
          'clients that named it in `identity_providers` no longer do.',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
      preValidation: admin,
    },
    async function deleteIdentityProvider(request, reply) {
      if ((await registry.delete(request.params.id, auditContextOf(request))) === undefined) {
        throw notFound('identity provider');
      }
      return reply.code(204).send();
    },
  );
}
