import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  newClientSecret,
  registerScopesOf,
  validateClientInput,
  viewClient,
  createClient,
  type ClientInput,
} from '../../../../core/client-registry.js';
import type { Client } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import { locationOf } from '../context.js';
import { notFound, Problem } from '../problem.js';
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
  IdParams,
  ItemGrantParams,
  Problem as ProblemSchema,
  type ClientCreateBody,
  type ClientPatchBody,
  type ClientQueryString,
  type ClientReplaceBody,
} from '../schemas.js';
import { listStandingGrants, revokeGrantOf } from './grants.js';

const tags = ['clients'];
const errors = { '4xx': ProblemSchema };

/** /v1/clients: the client registry (scope admin). */
export function registerClientRoutes(api: FastifyInstance, context: ApiContext): void {
  const { storage, clock } = context;
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(id: string): Promise<Client> {
    const client = await storage.clients.get(id);
    if (client === undefined) throw notFound('client');
    return client;
  }

  /** Replaces a client's settings with `input` (validated in full); a secret appears when one is made. */
  async function replace(client: Client, input: ClientInput) {
    const fields = validateClientInput(input);
    const now = clock.now();
    // Turning a public client confidential needs a secret, shown once; the reverse drops it.
    const fresh = !fields.isPublic && client.secretHash === null ? newClientSecret() : undefined;
    const updated: Client = {
      ...client,
      ...fields,
      secretHash: fields.isPublic ? null : (fresh?.hash ?? client.secretHash),
      updatedAt: now,
    };
    await registerScopesOf(storage, updated.scopes, now);
    const secretChanges = updated.secretHash !== client.secretHash;
    if (!(await storage.clients.update(updated, secretChanges ? 'replace' : 'keep')))
      throw notFound('client');
    return { ...viewClient(updated), ...(fresh ? { client_secret: fresh.secret } : {}) };
  }

  api.get<{ Querystring: ClientQueryString }>(
    '/clients',
    {
      schema: {
        summary: 'List clients',
        description: 'Filters and pagination go in the query string.',
        tags,
        querystring: ClientQuery,
        response: { 200: ClientList, ...errors },
      },
      preValidation: admin,
    },
    async function listClients(request) {
      const { name, grant_type: grantType, limit = 20, offset = 0 } = request.query;
      const { items, total } = await storage.clients.list({ name, grantType, limit, offset });
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
      const { client, secret } = await createClient(storage, clock, request.body);
      reply.code(201).header('location', locationOf(context, 'clients', client.id));
      return { ...viewClient(client), ...(secret === undefined ? {} : { client_secret: secret }) };
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
      const result = await replace(await existing(request.params.id), request.body);
      reply.code(201);
      return result;
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
      const client = await existing(request.params.id);
      const body = request.body;
      const result = await replace(client, {
        name: body.name ?? client.name,
        redirect_uris: body.redirect_uris ?? client.redirectUris,
        grant_types: body.grant_types ?? client.grantTypes,
        scopes: body.scopes ?? client.scopes,
        token_type: body.token_type ?? client.tokenType,
        public: body.public ?? client.isPublic,
      });
      reply.code(201);
      return result;
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
      if (!(await storage.clients.delete(request.params.id))) throw notFound('client');
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
      if (client.isPublic) throw new Problem(409, 'a public client has no secret', { field: 'public' });
      const { secret, hash } = newClientSecret();
      if (
        !(await storage.clients.update({ ...client, secretHash: hash, updatedAt: clock.now() }, 'replace'))
      ) {
        throw notFound('client');
      }
      reply.code(201).header('location', locationOf(context, 'clients', client.id));
      return { client_id: client.id, client_secret: secret };
    },
  );

  api.get<{ Params: { id: string } }>(
    '/clients/:id/grants',
    {
      schema: {
        summary: "List a client's standing grants",
        tags,
        params: IdParams,
        response: { 200: GrantList, ...errors },
      },
      preValidation: admin,
    },
    async function clientGrants(request) {
      const client = await existing(request.params.id);
      return listStandingGrants(await storage.grants.listByClient(client.id), context);
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
      await revokeGrantOf(context, { clientId: request.params.id }, request.params.grantId);
      return reply.code(204).send();
    },
  );
}
