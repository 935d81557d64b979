import type { FastifyInstance } from 'fastify';
import { viewUser } from '../../../../core/users/user-registry.js';
import { callerOf } from '../authentication.js';
import type { ApiContext } from '../context.js';
import { notFound } from '../problem.js';
import { Me, Problem as ProblemSchema } from '../schemas.js';

/** GET /v1/users/me: the resource owner the token acts for (scope profile). */
export function registerMeRoutes(api: FastifyInstance, context: ApiContext): void {
  api.get(
    '/users/me',
    {
      schema: {
        summary: 'The user the access token acts for',
        description:
          'Needs scope `profile` and a token issued for a user; a client_credentials token gets 403. ' +
          'The email address comes only with scope `email` too, as at /userinfo.',
        tags: ['users'],
        response: { 200: Me, '4xx': ProblemSchema },
      },
      preValidation: context.requireToken({ scopes: ['profile'], user: true }),
    },
    async function me(request) {
      const { claims } = callerOf(request);
      const user = await context.engine.users.get(claims.sub);
      if (user === undefined) throw notFound('user');
      const { email, email_verified, ...view } = viewUser(user);
      // OpenID Connect Core §5.4: the address is what the email scope releases, not profile.
      return claims.scope.split(' ').includes('email') ? { ...view, email, email_verified } : view;
    },
  );
}
