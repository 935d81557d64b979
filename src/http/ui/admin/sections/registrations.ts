import type { FastifyReply, FastifyRequest } from 'fastify';
import { items, num, problemOf, str, type ApiProblem } from '../admin-api.js';
import type { Console, ConsoleRouter } from '../console-router.js';
import {
  confirmDeleteRegistrationPage,
  confirmDeleteTokenPage,
  EXPIRY_CHOICES,
  initialAccessTokensPage,
  registrationsPage,
  type RegisteredRow,
  type RegistrationWay,
  type TokenFormValues,
  type TokenRow,
} from '../../pages/admin/registrations-pages.js';
import { field, sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'client-deleted': 'The client was deleted.',
  'token-deleted': 'The initial access token was deleted.',
};

function registeredRow(value: unknown): RegisteredRow {
  return {
    id: str(value, 'client_id'),
    name: str(value, 'name'),
    registration: str(value, 'registration'),
    createdAt: str(value, 'created_at'),
  };
}

function tokenRow(value: unknown): TokenRow {
  const scopes = (value as Record<string, unknown>)['scopes'];
  return {
    id: str(value, 'id'),
    scopes: Array.isArray(scopes) ? scopes.filter((s): s is string => typeof s === 'string') : null,
    createdAt: str(value, 'created_at'),
    expiresAt: str(value, 'expires_at'),
    expired: str(value, 'expired') === 'true',
    clientsRegistered: num(value, 'clients_registered') ?? 0,
  };
}

const DEFAULT_EXPIRY = '86400';

/**
 * The console's registrations (decisions 20 and 42): self-registered clients over
 * /v1/clients?registration=…, and initial access tokens over /v1/initial-access-tokens.
 */
export function registerRegistrations(router: ConsoleRouter): void {
  const listPath = `${router.adminPath}/registrations`;
  const tokensPath = `${listPath}/tokens`;
  const id = (request: FastifyRequest) => encodeURIComponent(router.param(request));

  router.page(listPath, async (request, reply, c) => {
    const chosen = router.query(request, 'way');
    const way: RegistrationWay =
      chosen === 'token' || chosen === 'open' || chosen === 'document' ? chosen : 'any';
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    // Every client that is not an operator's (the parameter repeated): self-registered either way, or
    // described by a Client ID Metadata Document (decision 46).
    for (const value of way === 'any' ? ['token', 'open', 'document'] : [way])
      params.append('registration', value);
    const answer = await c.api.get(`/clients?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'registrations');
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      registrationsPage(c.frame, {
        rows: items(answer.body).map(registeredRow),
        way,
        offset,
        limit: router.pageSize,
        total: num(answer.body, 'total') ?? 0,
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  /** The client, if it is a self-registered one: this section deletes no operator's client. */
  async function registered(request: FastifyRequest, reply: FastifyReply, c: Console) {
    const answer = await c.api.get(`/clients/${id(request)}`);
    if (answer.status !== 200)
      return { failed: await router.failed(request, reply, c, answer, 'registrations') };
    const row = registeredRow(answer.body);
    if (row.registration === 'operator')
      return { failed: router.see(reply, `${router.adminPath}/clients/${id(request)}`) };
    return { row };
  }

  router.page(`${listPath}/:id/delete`, async (request, reply, c) => {
    const found = await registered(request, reply, c);
    if (found.row === undefined) return found.failed;
    return sendPage(reply, 200, confirmDeleteRegistrationPage(c.frame, found.row));
  });

  router.action(
    `${listPath}/:id/delete`,
    () => listPath,
    async (request, reply, c) => {
      const found = await registered(request, reply, c);
      if (found.row === undefined) return found.failed;
      const answer = await c.api.request('DELETE', `/clients/${id(request)}`);
      if (answer.status !== 204) return router.failed(request, reply, c, answer, 'registrations');
      return router.see(reply, listPath, 'client-deleted');
    },
  );

  async function tokens(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    form: { values: TokenFormValues; problem?: ApiProblem; token?: string; status?: number },
  ): Promise<FastifyReply> {
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    const answer = await c.api.get(`/initial-access-tokens?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'registrations');
    const notice =
      form.token !== undefined ? 'The initial access token was made.' : router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      form.status ?? 200,
      initialAccessTokensPage(c.frame, {
        rows: items(answer.body).map(tokenRow),
        offset,
        limit: router.pageSize,
        total: num(answer.body, 'total') ?? 0,
        values: form.values,
        registration: router.ui.config.dynamicRegistration,
        ...(form.problem !== undefined ? { problem: form.problem } : {}),
        ...(form.token !== undefined ? { token: form.token } : {}),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  }

  router.page(tokensPath, (request, reply, c) =>
    tokens(request, reply, c, { values: { expiresIn: DEFAULT_EXPIRY, scopes: '' } }),
  );

  router.action(
    tokensPath,
    () => tokensPath,
    async (request, reply, c) => {
      const values: TokenFormValues = {
        expiresIn: field(request.body, 'expires_in') ?? DEFAULT_EXPIRY,
        scopes: field(request.body, 'scopes') ?? '',
      };
      const expiresIn = EXPIRY_CHOICES.some((choice) => choice.value === values.expiresIn)
        ? Number(values.expiresIn)
        : Number.NaN;
      const scopes = values.scopes.split(/\s+/).filter((part) => part !== '');
      const answer = await c.api.request('POST', '/initial-access-tokens', {
        // A value no choice offers goes as it came, for the API to refuse by name.
        expires_in: Number.isNaN(expiresIn) ? values.expiresIn : expiresIn,
        ...(scopes.length === 0 ? {} : { scopes }),
      });
      if (answer.status === 401 || answer.status === 403)
        return router.failed(request, reply, c, answer, 'registrations');
      const problem = problemOf(answer);
      if (problem !== undefined) return tokens(request, reply, c, { values, problem, status: answer.status });
      // Shown this once, in this answer: never in a URL, never again.
      return tokens(request, reply, c, {
        values: { expiresIn: DEFAULT_EXPIRY, scopes: '' },
        token: str(answer.body, 'initial_access_token'),
        status: 201,
      });
    },
  );

  router.page(`${tokensPath}/:id/delete`, async (request, reply, c) => {
    const answer = await c.api.get(`/initial-access-tokens/${id(request)}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'registrations');
    return sendPage(reply, 200, confirmDeleteTokenPage(c.frame, tokenRow(answer.body)));
  });

  router.action(
    `${tokensPath}/:id/delete`,
    () => tokensPath,
    async (request, reply, c) => {
      const answer = await c.api.request('DELETE', `/initial-access-tokens/${id(request)}`);
      if (answer.status !== 204) return router.failed(request, reply, c, answer, 'registrations');
      return router.see(reply, tokensPath, 'token-deleted');
    },
  );
}
