import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { User } from '../../../../core/model.js';
import { hashPassword } from '../../../../core/passwords.js';
import {
  createUser,
  endUserSignIns,
  validatePassword,
  validateUsername,
  viewUser,
} from '../../../../core/user-registry.js';
import { ConflictError } from '../../../../core/validation.js';
import type { ApiContext } from '../context.js';
import { locationOf } from '../context.js';
import { notFound } from '../problem.js';
import {
  GrantList,
  IdParams,
  ItemGrantParams,
  Problem as ProblemSchema,
  User as UserSchema,
  UserCreate,
  UserList,
  UserPatch,
  UserQuery,
  UserReplace,
  type UserCreateBody,
  type UserPatchBody,
  type UserQueryString,
  type UserReplaceBody,
} from '../schemas.js';
import { listStandingGrants, revokeGrantOf } from './grants.js';

const tags = ['users'];
const errors = { '4xx': ProblemSchema };

/** A unique-constraint violation, on SQLite or PostgreSQL: another writer took the name first. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** /v1/users: resource owners (scope admin). Passwords are write-only. */
export function registerUserRoutes(api: FastifyInstance, context: ApiContext): void {
  const { storage, clock } = context;
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(id: string): Promise<User> {
    const user = await storage.users.get(id);
    if (user === undefined) throw notFound('user');
    return user;
  }

  async function update(user: User, changes: { username?: string; password?: string }) {
    const username = changes.username === undefined ? user.username : validateUsername(changes.username);
    const password = changes.password === undefined ? undefined : validatePassword(changes.password);
    if (username !== user.username) {
      const holder = await storage.users.getByUsername(username);
      if (holder !== undefined && holder.id !== user.id) {
        throw new ConflictError('username', 'user name already taken');
      }
    }
    const updated: User = {
      ...user,
      username,
      passwordHash: password === undefined ? user.passwordHash : await hashPassword(password),
      updatedAt: clock.now(),
    };
    try {
      if (!(await storage.users.update(updated))) throw notFound('user');
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('username', 'user name already taken');
      throw error;
    }
    // A new password is a reset: what the old one opened ends with it (the same rule as changePassword).
    if (password !== undefined) await endUserSignIns(storage, updated.id, updated.updatedAt);
    return viewUser(updated);
  }

  api.get<{ Querystring: UserQueryString }>(
    '/users',
    {
      schema: {
        summary: 'List users',
        tags,
        querystring: UserQuery,
        response: { 200: UserList, ...errors },
      },
      preValidation: admin,
    },
    async function listUsers(request) {
      const { username, limit = 20, offset = 0 } = request.query;
      if (username !== undefined) {
        const user = await storage.users.getByUsername(username);
        const items = user === undefined ? [] : [viewUser(user)];
        return { items: items.slice(offset, offset + limit), total: items.length, limit, offset };
      }
      const { items, total } = await storage.users.list(limit, offset);
      return { items: items.map(viewUser), total, limit, offset };
    },
  );

  api.post<{ Body: UserCreateBody }>(
    '/users',
    {
      schema: {
        summary: 'Create a user',
        description: 'A user name already taken answers 409.',
        tags,
        body: UserCreate,
        response: { 201: UserSchema, ...errors },
      },
      preValidation: admin,
    },
    async function createUserRoute(request, reply) {
      let user: User;
      try {
        user = await createUser(storage, clock, request.body);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError('username', 'user name already taken');
        throw error;
      }
      reply.code(201).header('location', locationOf(context, 'users', user.id));
      return viewUser(user);
    },
  );

  api.get<{ Params: { id: string } }>(
    '/users/:id',
    {
      schema: { summary: 'Read a user', tags, params: IdParams, response: { 200: UserSchema, ...errors } },
      preValidation: admin,
    },
    async function getUser(request) {
      return viewUser(await existing(request.params.id));
    },
  );

  api.put<{ Params: { id: string }; Body: UserReplaceBody }>(
    '/users/:id',
    {
      schema: {
        summary: 'Replace a user',
        description:
          'Send the complete user; leave out the write-only password to keep it. A new password ends ' +
          'the user’s browser sessions and revokes their grants, as PATCH does.',
        tags,
        params: IdParams,
        body: UserReplace,
        response: { 201: UserSchema, ...errors },
      },
      preValidation: admin,
    },
    async function replaceUser(request, reply) {
      const result = await update(await existing(request.params.id), request.body);
      reply.code(201);
      return result;
    },
  );

  api.patch<{ Params: { id: string }; Body: UserPatchBody }>(
    '/users/:id',
    {
      schema: {
        summary: 'Change a user’s name or password',
        description:
          'A new password signs the user out everywhere: their browser sessions end, and every grant ' +
          'they gave is revoked, so its refresh and access tokens stop working at once.',
        tags,
        params: IdParams,
        body: UserPatch,
        response: { 201: UserSchema, ...errors },
      },
      preValidation: admin,
    },
    async function patchUser(request, reply) {
      const result = await update(await existing(request.params.id), request.body);
      reply.code(201);
      return result;
    },
  );

  api.delete<{ Params: { id: string } }>(
    '/users/:id',
    {
      schema: {
        summary: 'Delete a user',
        description: 'Their grants go with them, and so every token issued for them stops working.',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
      preValidation: admin,
    },
    async function deleteUser(request, reply) {
      if (!(await storage.users.delete(request.params.id))) throw notFound('user');
      return reply.code(204).send();
    },
  );

  api.get<{ Params: { id: string } }>(
    '/users/:id/grants',
    {
      schema: {
        summary: "List a user's standing grants",
        tags,
        params: IdParams,
        response: { 200: GrantList, ...errors },
      },
      preValidation: admin,
    },
    async function userGrants(request) {
      const user = await existing(request.params.id);
      return listStandingGrants(await storage.grants.listByUser(user.id), context);
    },
  );

  api.delete<{ Params: { id: string; grantId: string } }>(
    '/users/:id/grants/:grantId',
    {
      schema: {
        summary: 'Revoke one grant of a user',
        description: 'Its refresh tokens and access tokens stop working at once.',
        tags,
        params: ItemGrantParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errors },
      },
      preValidation: admin,
    },
    async function revokeUserGrant(request, reply) {
      await existing(request.params.id);
      await revokeGrantOf(context, { userId: request.params.id }, request.params.grantId);
      return reply.code(204).send();
    },
  );
}
