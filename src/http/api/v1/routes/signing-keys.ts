import type { FastifyInstance } from 'fastify';
import { viewSigningKey as viewKey } from '../../../../core/keys/signing-key-registry.js';
import type { ApiContext } from '../context.js';
import { auditContextOf, locationOf } from '../context.js';
import { notFound } from '../problem.js';
import { KidParams, Problem as ProblemSchema, SigningKey, SigningKeyList } from '../schemas.js';

const tags = ['signing-keys'];
const errors = { '4xx': ProblemSchema };

/** /v1/signing-keys: list the token-signing keys; POST rotates, POST …/revoke revokes (scope admin). */
export function registerSigningKeyRoutes(api: FastifyInstance, context: ApiContext): void {
  const { signingKeys } = context.engine;
  const admin = context.requireToken({ scopes: ['admin'] });

  api.get(
    '/signing-keys',
    {
      schema: {
        summary: 'List signing keys, newest first',
        tags,
        response: { 200: SigningKeyList, ...errors },
      },
      preValidation: admin,
    },
    async function listKeys() {
      return { items: (await signingKeys.list()).map(viewKey) };
    },
  );

  api.post(
    '/signing-keys',
    {
      schema: {
        summary: 'Rotate: create a new active signing key',
        description:
          'The previous keys are retired; they stay in /jwks long enough for the tokens they signed to ' +
          'expire. Every Gatehouse process signs with the new key within seconds.',
        tags,
        response: { 201: SigningKey, ...errors },
      },
      preValidation: admin,
    },
    async function rotateKey(request, reply) {
      const kid = await signingKeys.rotate(auditContextOf(request));
      const key = await signingKeys.get(kid);
      if (key === undefined) throw new Error('rotated key not found in the store');
      reply.code(201).header('location', locationOf(context, 'signing-keys', kid));
      return viewKey(key);
    },
  );

  api.post<{ Params: { kid: string } }>(
    '/signing-keys/:kid/revoke',
    {
      schema: {
        summary: 'Revoke a signing key (a compromised one)',
        description:
          'An action no HTTP method fits: the key stays listed, as revoked. It leaves /jwks at once, never ' +
          'signs again, and the tokens it signed are refused (introspection answers inactive). Revoking ' +
          'the active key first makes a new active key. Every Gatehouse process stops trusting it within ' +
          'seconds. Revoking a revoked key changes nothing.',
        tags,
        params: KidParams,
        response: { 201: SigningKey, ...errors },
      },
      preValidation: admin,
    },
    async function revokeKey(request, reply) {
      const { kid } = request.params;
      if ((await signingKeys.revoke(kid, auditContextOf(request))) === undefined)
        throw notFound('signing key', 'kid');
      const key = await signingKeys.get(kid);
      if (key === undefined) throw notFound('signing key', 'kid');
      reply.code(201).header('location', locationOf(context, 'signing-keys', kid));
      return viewKey(key);
    },
  );

  api.get<{ Params: { kid: string } }>(
    '/signing-keys/:kid',
    {
      schema: {
        summary: 'Read a signing key',
        tags,
        params: KidParams,
        response: { 200: SigningKey, ...errors },
      },
      preValidation: admin,
    },
    async function getKey(request) {
      const key = await signingKeys.get(request.params.kid);
      if (key === undefined) throw notFound('signing key', 'kid');
      return viewKey(key);
    },
  );
}
