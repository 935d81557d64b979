import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  viewClient,
  type ClientWithSecret as ClientAndSecret,
} from '../../../../core/clients/client-registry.js';
import type { Client } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import { auditContextOf, locationOf } from '../context.js';
import { notFound } from '../problem.js';
import {
  Client as ClientSchema,
  ClientCreate,
  ClientList,
  ClientPatch,
  ClientQuery,
  ClientReplace,
  ClientSecret,
  ClientWithSecret,
  GrantList,
  GrantQuery,
  type GrantQueryString,
  IdParams,
  ItemGrantParams,
  Problem as ProblemSchema,
  type ClientCreateBody,
  type ClientPatchBody,
  type ClientQueryString,
  type ClientReplaceBody,
} from '../schemas.js';
import { listGrants, revokeGrantOf } from './grants.js';

const tags = ['clients'];
const errors = { '4xx': ProblemSchema };

/** /v1/clients: the client registry (scope admin). */
export function registerClientRoutes(api: FastifyInstance, context: ApiContext): void {
  const { clients } = context.engine;
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(id: string): Promise<Client> {
    const client = await clients.get(id);
    if (client === undefined) throw notFound('client');
    return client;
  }

  /** The client as /v1 shows it, with its secret when the change made one (shown this once). */
  function withSecret({ client, secret }: ClientAndSecret) {
    return { ...viewClient(client), ...(secret === undefined ? {} : { client_secret: secret }) };
  }

  api.get<{ Querystring: ClientQueryString }>(
    '/clients',
    {
      schema: {
        summary: 'List clients',
        description:
          'Filters and pagination go in the query string; `registration=open` finds the clients that ' +
          'registered themselves without an initial access token.',
        tags,
        querystring: ClientQuery,
        response: { 200: ClientList, ...errors },
      },
      preValidation: admin,
    },
    async function listClients(request) {
      const { name, grant_type: grantType, registration, limit = 20, offset = 0 } = request.query;
      const { items, total } = await clients.list({ name, grantType, registration, limit, offset });
      return { items: items.map(viewClient), total, limit, offset };
    },
  );

  api.post<{ Body: ClientCreateBody }>(
    '/clients',
    {
      schema: {
        summary: 'Register a client',
        description:
          'Answers 201 with the client, its Location, and (for a confidential client) its secret: shown ' +
          'this once, stored only as a hash.',
        tags,
        body: ClientCreate,
        response: { 201: ClientWithSecret, ...errors },
      },
      preValidation: admin,
    },
    async function createClientRoute(request, reply) {
      const created = await clients.create(request.body, undefined, auditContextOf(request));
      reply.code(201).header('location', locationOf(context, 'clients', created.client.id));
      return withSecret(created);
    },
  );

  api.get<{ Params: { id: string } }>(
    '/clients/:id',
    {
      schema: {
        summary: 'Read a client',
        tags,
        params: IdParams,
        response: { 200: ClientSchema, ...errors },
      },
      preValidation: admin,
    },
    async function getClient(request) {
      return viewClient(await existing(request.params.id));
    },
  );

  api.put<{ Params: { id: string }; Body: ClientReplaceBody }>(
    '/clients/:id',
    {
      schema: {
        summary: 'Replace a client',
        description:
          'Send the complete client, in the same shape as POST; a field left out takes the default it ' +
          'would take at creation. Making a public client confidential creates a secret, returned once.',
        tags,
        params: IdParams,
        body: ClientReplace,
        response: { 201: ClientWithSecret, ...errors },
      },
      preValidation: admin,
    },
    async function replaceClient(request, reply) {
      const result = await clients.replace(
        await existing(request.params.id),
        request.body,
        auditContextOf(request),
      );
      reply.code(201);
      return withSecret(result);
    },
  );

  api.patch<{ Params: { id: string }; Body: ClientPatchBody }>(
    '/clients/:id',
    {
      schema: {
        summary: 'Change some fields of a client',
        tags,
        params: IdParams,
        body: ClientPatch,
        response: { 201: ClientWithSecret, ...errors },
      },
      preValidation: admin,
    },
    async function patchClient(request, reply) {
      const result = await clients.update(
        await existing(request.params.id),
        request.body,
        auditContextOf(request),
      );
      reply.code(201);
      return withSecret(result);
    },
  );

  api.delete<{ Params: { id: string } }>(
    '/clients/:id',
    {
      schema: {
        summary: 'Delete a client',
        description: 'Its grants go with it, and so every token it holds stops working.',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
      preValidation: admin,
    },
    async function deleteClient(request, reply) {
      if (!(await clients.delete(request.params.id, auditContextOf(request)))) throw notFound('client');
      return reply.code(204).send();
    },
  );

  api.post<{ Params: { id: string } }>(
    '/clients/:id/rotate-secret',
    {
      schema: {
        summary: 'Give a client a new secret',
        description:
          'An action, so a POST to a sub-resource. The new secret is returned once; the old ' +
          'one stops working at once. Tokens already issued stay valid.',
        tags,
        params: IdParams,
        response: { 201: ClientSecret, ...errors },
      },
      preValidation: admin,
    },
    async function rotateSecret(request, reply) {
      const client = await existing(request.params.id);
      const secret = await clients.rotateSecret(client, auditContextOf(request));
      reply.code(201).header('location', locationOf(context, 'clients', client.id));
      return { client_id: client.id, client_secret: secret };
    },
  );

  api.get<{ Params: { id: string }; Querystring: GrantQueryString }>(
    '/clients/:id/grants',
    {
      schema: {
        summary: "List a client's standing grants",
        tags,
        params: IdParams,
        querystring: GrantQuery,
        response: { 200: GrantList, ...errors },
      },
      preValidation: admin,
    },
    async function clientGrants(request) {
      const client = await existing(request.params.id);
      return listGrants(context, { clientId: client.id }, request.query);
    },
  );

  api.delete<{ Params: { id: string; grantId: string } }>(
    '/clients/:id/grants/:grantId',
    {
      schema: {
        summary: 'Revoke one grant of a client',
        description: 'Its refresh tokens and access tokens stop working at once.',
        tags,
        params: ItemGrantParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errors },
      },
      preValidation: admin,
    },
    async function revokeClientGrant(request, reply) {
      await existing(request.params.id);
      await revokeGrantOf(
        context,
        { clientId: request.params.id },
        request.params.grantId,
        auditContextOf(request),
      );
      return reply.code(204).send();
    },
  );
}
