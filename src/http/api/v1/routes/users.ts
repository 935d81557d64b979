import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { User } from '../../../../core/model.js';
import { viewUserSummary } from '../../../../core/sign-in/account-security.js';
import type { UserChanges } from '../../../../core/users/user-registry.js';
import type { ApiContext } from '../context.js';
import { auditContextOf, locationOf } from '../context.js';
import type { AuditContext } from '../../../../core/audit/audit-log.js';
import { notFound, Problem } from '../problem.js';
import { isoTime } from '../../../../shared/clock.js';
import { MAIL_LINK_TTL_SECONDS, MAILS_PER_USER_PER_HOUR } from '../../../../core/users/account-mail.js';
import {
  FederatedLinkList,
  GrantList,
  UserGrantQuery,
  type UserGrantQueryString,
  IdParams,
  ItemGrantParams,
  ItemLinkParams,
  ItemSessionParams,
  PasswordResetStarted,
  SessionList,
  Problem as ProblemSchema,
  UserWithMethods as UserSchema,
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
import { listGrants, revokeGrantOf } from './grants.js';

const tags = ['users'];
const errors = { '4xx': ProblemSchema };

/** /v1/users: resource owners (scope admin). Passwords are write-only. */
export function registerUserRoutes(api: FastifyInstance, context: ApiContext): void {
  const { users, account, identityProviders, browserSessions, secondFactors, accountMail } = context.engine;
  /** Decision 37: every answer carries the user's ways of signing in and sessions, never a secret. */
  const viewUser = async (user: User) => viewUserSummary(await account.summary(user));
  const admin = context.requireToken({ scopes: ['admin'] });

  async function existing(id: string): Promise<User> {
    const user = await users.get(id);
    if (user === undefined) throw notFound('user');
    return user;
  }

  /** PUT and PATCH: UserRegistry.update's rules (a new password ends the user's sign-ins, decision 12). */
  async function update(user: User, changes: UserChanges, audit: AuditContext) {
    return await viewUser(await users.update(user, changes, audit));
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
        const user = await users.getByUsername(username);
        const items = user === undefined ? [] : [await viewUser(user)];
        return { items: items.slice(offset, offset + limit), total: items.length, limit, offset };
      }
      const { items, total } = await users.list(limit, offset);
      return { items: await Promise.all(items.map(viewUser)), total, limit, offset };
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
      const user = await users.create(request.body, auditContextOf(request));
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
      // RFC 9110 §9.3.4: the complete representation; an email or name left out is removed.
      const { email = null, name = null, admin = false, disabled = false, ...rest } = request.body;
      const result = await update(
        await existing(request.params.id),
        {
          ...rest,
          email,
          name,
          admin,
          disabled,
        },
        auditContextOf(request),
      );
      reply.code(201);
      return result;
    },
  );

  api.patch<{ Params: { id: string }; Body: UserPatchBody }>(
    '/users/:id',
    {
      schema: {
        summary: 'Change a user’s user name, email, full name, administrator role, password or disabled',
        description:
          'A new password signs the user out everywhere: their browser sessions end, and every grant ' +
          'they gave is revoked, so its refresh and access tokens stop working at once. Disabling ' +
          '(`disabled` true) does the same and refuses every sign-in until `disabled` is false again.',
        tags,
        params: IdParams,
        body: UserPatch,
        response: { 201: UserSchema, ...errors },
      },
      preValidation: admin,
    },
    async function patchUser(request, reply) {
      const result = await update(await existing(request.params.id), request.body, auditContextOf(request));
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
      if (!(await users.delete(request.params.id, auditContextOf(request)))) throw notFound('user');
      return reply.code(204).send();
    },
  );

  api.get<{ Params: { id: string }; Querystring: UserGrantQueryString }>(
    '/users/:id/grants',
    {
      schema: {
        summary: "List a user's standing grants",
        tags,
        params: IdParams,
        querystring: UserGrantQuery,
        response: { 200: GrantList, ...errors },
      },
      preValidation: admin,
    },
    async function userGrants(request) {
      const user = await existing(request.params.id);
      const { client_id: clientId, ...paging } = request.query;
      return listGrants(
        context,
        { userId: user.id, ...(clientId !== undefined ? { clientId } : {}) },
        paging,
      );
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
      await revokeGrantOf(
        context,
        { userId: request.params.id },
        request.params.grantId,
        auditContextOf(request),
      );
      return reply.code(204).send();
    },
  );

  api.get<{ Params: { id: string } }>(
    '/users/:id/sessions',
    {
      schema: {
        summary: "List a user's browser sessions",
        description:
          'The live sessions, oldest first, as the user’s own security page lists them (decision 37): ' +
          'where each was signed in from and when it was last active (to within five minutes).',
        tags,
        params: IdParams,
        response: { 200: SessionList, ...errors },
      },
      preValidation: admin,
    },
    async function userSessions(request) {
      const user = await existing(request.params.id);
      const sessions = await browserSessions.list(user.id, undefined);
      return {
        items: sessions.map((session) => ({
          id: session.sid,
          user_agent: session.userAgent ?? null,
          address: session.address ?? null,
          created_at: isoTime(session.createdAt),
          last_active_at: isoTime(session.lastActiveAt),
        })),
      };
    },
  );

  api.delete<{ Params: { id: string; sid: string } }>(
    '/users/:id/sessions/:sid',
    {
      schema: {
        summary: 'Sign a user out of one browser session',
        description:
          'The browser is signed out at its next request. Tokens already issued to applications stay ' +
          'valid: revoke the grant for those.',
        tags,
        params: ItemSessionParams,
        response: { 204: Type.Null({ description: 'Signed out' }), ...errors },
      },
      preValidation: admin,
    },
    async function endUserSession(request, reply) {
      const user = await existing(request.params.id);
      if (!(await browserSessions.endOf(user.id, request.params.sid, auditContextOf(request)))) {
        throw notFound('session', 'sid');
      }
      return reply.code(204).send();
    },
  );

  api.delete<{ Params: { id: string } }>(
    '/users/:id/sessions',
    {
      schema: {
        summary: 'Sign a user out of every browser session',
        description:
          'Every browser the user is signed in with is signed out. Grants and their tokens stay: revoke ' +
          'them under /grants, or set a new password, which ends both (decision 12).',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Signed out everywhere' }), ...errors },
      },
      preValidation: admin,
    },
    async function endUserSessions(request, reply) {
      const user = await existing(request.params.id);
      await browserSessions.endAll(user.id, auditContextOf(request));
      return reply.code(204).send();
    },
  );

  api.delete<{ Params: { id: string } }>(
    '/users/:id/second-factors',
    {
      schema: {
        summary: "Remove a user's authenticator app and recovery codes",
        description:
          'As `gatehouse users reset-mfa`: the authenticator app and every recovery code are removed, so ' +
          'the user signs in with the password alone (or sets an app up again where one is required). ' +
          'Passkeys stay, and sessions already signed in stay.',
        tags,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errors },
      },
      preValidation: admin,
    },
    async function resetSecondFactors(request, reply) {
      const user = await existing(request.params.id);
      await secondFactors.reset(user.id, auditContextOf(request));
      return reply.code(204).send();
    },
  );

  api.post<{ Params: { id: string } }>(
    '/users/:id/password-resets',
    {
      schema: {
        summary: 'Mail a user a link to choose a new password',
        description:
          'The single-use link of "Forgot password?" (decision 35), to the user’s own email address; it ' +
          'works for 30 minutes. Answers 202 once the link is stored: the mail is sent after the answer. ' +
          'Nothing changes for the user until the link is followed; then every browser session ends and ' +
          'every grant is revoked (decision 12). A user without an email address answers 409 naming ' +
          '`email` (set one with PATCH first); more than five links in an hour, 429.',
        tags,
        params: IdParams,
        response: { 202: PasswordResetStarted, ...errors },
      },
      preValidation: admin,
    },
    async function startPasswordReset(request, reply) {
      const user = await existing(request.params.id);
      const result = await accountMail.sendPasswordResetFor(user, auditContextOf(request), (error) =>
        request.log.error(
          { err: { name: (error as Error).name, message: (error as Error).message } },
          'a mail could not be sent',
        ),
      );
      if (result.outcome === 'no-email') {
        throw new Problem(409, 'the user has no email address to send a link to: set one first', {
          field: 'email',
        });
      }
      if (result.outcome === 'throttled') {
        throw new Problem(
          429,
          `this user was sent ${MAILS_PER_USER_PER_HOUR} links within the hour already: try again later`,
          {
            headers: { 'retry-after': '3600' },
          },
        );
      }
      reply.code(202);
      return { email: result.address, expires_in: MAIL_LINK_TTL_SECONDS };
    },
  );

  api.get<{ Params: { id: string } }>(
    '/users/:id/identity-links',
    {
      schema: {
        summary: "List a user's links to upstream identity providers",
        description:
          'Each link joins the user to one upstream person, (issuer, subject), through a provider of ' +
          '/v1/identity-providers (decision 39).',
        tags,
        params: IdParams,
        response: { 200: FederatedLinkList, ...errors },
      },
      preValidation: admin,
    },
    async function userIdentityLinks(request) {
      const user = await existing(request.params.id);
      return { items: await identityProviders.links(user.id) };
    },
  );

  api.delete<{ Params: { id: string; linkId: string } }>(
    '/users/:id/identity-links/:linkId',
    {
      schema: {
        summary: "Remove one of a user's links to an upstream identity provider",
        description:
          'The user no longer signs in through that upstream account; their other ways of signing in stay.',
        tags,
        params: ItemLinkParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errors },
      },
      preValidation: admin,
    },
    async function removeUserIdentityLink(request, reply) {
      const user = await existing(request.params.id);
      if (!(await identityProviders.removeLink(user.id, request.params.linkId))) {
        throw notFound('identity link', 'linkId');
      }
      return reply.code(204).send();
    },
  );
}
