import type { FastifyInstance } from 'fastify';
import { viewUser } from '../../../../core/user-registry.js';
import { callerOf } from '../authentication.js';
import type { ApiContext } from '../context.js';
import { notFound } from '../problem.js';
import { Problem as ProblemSchema, User } from '../schemas.js';

/** GET /v1/users/me: the resource owner the token acts for (scope profile). */
export function registerMeRoutes(api: FastifyInstance, context: ApiContext): void {
  api.get(
    '/users/me',
    {
      schema: {
        summary: 'The user the access token acts for',
        description:
          'Needs scope `profile` and a token issued for a user; a client_credentials token gets 403.',
        tags: ['users'],
        response: { 200: User, '4xx': ProblemSchema },
      },
      preValidation: context.requireToken({ scopes: ['profile'], user: true }),
    },
    async function me(request) {
      const user = await context.storage.users.get(callerOf(request).claims.sub);
      if (user === undefined) throw notFound('user');
      return viewUser(user);
    },
  );
}
