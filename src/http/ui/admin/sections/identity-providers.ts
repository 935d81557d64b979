import type { FastifyReply, FastifyRequest } from 'fastify';
import { items, num, problemOf, str, strings, type ApiProblem } from '../admin-api.js';
import type { Console, ConsoleRouter } from '../console-router.js';
import {
  confirmDeleteIdentityProviderPage,
  identityProviderPage,
  identityProvidersPage,
  type ProviderFormValues,
  type ProviderRow,
} from '../../pages/admin/identity-providers-pages.js';
import { field, sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'provider-created': 'The identity provider was added. Register its redirect URI at the provider.',
  'provider-saved': 'The identity provider was saved.',
  'provider-deleted': 'The identity provider was deleted.',
};

function providerRow(value: unknown): ProviderRow {
  return {
    id: str(value, 'id'),
    name: str(value, 'name'),
    kind: str(value, 'kind'),
    issuer: str(value, 'issuer'),
    authorizationEndpoint: str(value, 'authorization_endpoint'),
    tokenEndpoint: str(value, 'token_endpoint'),
    userinfoEndpoint: str(value, 'userinfo_endpoint'),
    clientId: str(value, 'client_id'),
    clientAuth: str(value, 'client_auth'),
    clientSecretSet: str(value, 'client_secret_set') === 'true',
    scopes: strings(value, 'scopes'),
    redirectUri: str(value, 'redirect_uri'),
    createdAt: str(value, 'created_at'),
    updatedAt: str(value, 'updated_at'),
  };
}

const split = (text: string) => text.split(/\s+/).filter((part) => part !== '');

/** The form's values (never the secret: a page shows no secret back, even one just typed). */
function formOf(body: unknown): { values: ProviderFormValues; secret: string } {
  return {
    values: {
      name: (field(body, 'name') ?? '').trim(),
      issuer: (field(body, 'issuer') ?? '').trim(),
      clientId: (field(body, 'client_id') ?? '').trim(),
      scopes: field(body, 'scopes') ?? '',
    },
    secret: field(body, 'client_secret') ?? '',
  };
}

const valuesOf = (row: ProviderRow): ProviderFormValues => ({
  name: row.name,
  issuer: row.issuer,
  clientId: row.clientId,
  scopes: row.scopes.join(' '),
});

/**
 * The console's identity providers (decisions 39 and 42), over /v1/identity-providers. The API
 * discovers an OpenID Provider when it is added or its issuer changes, and answers a failed discovery
 * with a 400 naming `issuer`, shown next to that field.
 */
export function registerIdentityProviders(router: ConsoleRouter): void {
  const listPath = `${router.adminPath}/identity-providers`;
  const itemPath = `${listPath}/:id`;
  const apiPath = (request: FastifyRequest) =>
    `/identity-providers/${encodeURIComponent(router.param(request))}`;
  const back = (request: FastifyRequest) => `${listPath}/${encodeURIComponent(router.param(request))}`;

  async function list(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    form: { values: ProviderFormValues; problem?: ApiProblem; status?: number },
  ): Promise<FastifyReply> {
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    const answer = await c.api.get(`/identity-providers?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'identity-providers');
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      form.status ?? 200,
      identityProvidersPage(c.frame, {
        rows: items(answer.body).map(providerRow),
        offset,
        limit: router.pageSize,
        total: num(answer.body, 'total') ?? 0,
        values: form.values,
        ...(form.problem !== undefined ? { problem: form.problem } : {}),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  }

  router.page(listPath, (request, reply, c) =>
    list(request, reply, c, { values: { name: '', issuer: '', clientId: '', scopes: '' } }),
  );

  router.action(
    listPath,
    () => listPath,
    async (request, reply, c) => {
      const { values, secret } = formOf(request.body);
      const scopes = split(values.scopes);
      const answer = await c.api.request('POST', '/identity-providers', {
        name: values.name,
        issuer: values.issuer,
        client_id: values.clientId,
        // Without one, the API says what a provider without a secret needs, next to this field.
        ...(secret === '' ? {} : { client_secret: secret }),
        ...(scopes.length === 0 ? {} : { scopes }),
      });
      if (answer.status === 401 || answer.status === 403)
        return router.failed(request, reply, c, answer, 'identity-providers');
      const problem = problemOf(answer);
      if (problem !== undefined) return list(request, reply, c, { values, problem, status: answer.status });
      return router.see(
        reply,
        `${listPath}/${encodeURIComponent(str(answer.body, 'id'))}`,
        'provider-created',
      );
    },
  );

  router.page(itemPath, async (request, reply, c) => {
    const answer = await c.api.get(apiPath(request));
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'identity-providers');
    const provider = providerRow(answer.body);
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      identityProviderPage(c.frame, {
        provider,
        values: valuesOf(provider),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  router.action(itemPath, back, async (request, reply, c) => {
    const current = await c.api.get(apiPath(request));
    if (current.status !== 200) return router.failed(request, reply, c, current, 'identity-providers');
    const provider = providerRow(current.body);
    const { values, secret } = formOf(request.body);
    const scopes = split(values.scopes);
    // Only what changed: the same issuer is not discovered again, and an empty secret keeps the one kept.
    const changes: Record<string, unknown> = {};
    if (values.name !== provider.name) changes['name'] = values.name;
    if (values.issuer !== provider.issuer) changes['issuer'] = values.issuer;
    if (values.clientId !== provider.clientId) changes['client_id'] = values.clientId;
    if (secret !== '') changes['client_secret'] = secret;
    if (scopes.join(' ') !== provider.scopes.join(' ') && scopes.length > 0) changes['scopes'] = scopes;
    if (Object.keys(changes).length === 0) return router.see(reply, back(request), 'provider-saved');
    const answer = await c.api.request('PATCH', apiPath(request), changes);
    if (answer.status === 401 || answer.status === 403 || answer.status === 404)
      return router.failed(request, reply, c, answer, 'identity-providers');
    const problem = problemOf(answer);
    if (problem !== undefined) {
      return sendPage(reply, answer.status, identityProviderPage(c.frame, { provider, values, problem }));
    }
    return router.see(reply, back(request), 'provider-saved');
  });

  router.page(`${itemPath}/delete`, async (request, reply, c) => {
    const answer = await c.api.get(apiPath(request));
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'identity-providers');
    return sendPage(reply, 200, confirmDeleteIdentityProviderPage(c.frame, providerRow(answer.body)));
  });

  router.action(`${itemPath}/delete`, back, async (request, reply, c) => {
    const answer = await c.api.request('DELETE', apiPath(request));
    if (answer.status !== 204) return router.failed(request, reply, c, answer, 'identity-providers');
    return router.see(reply, listPath, 'provider-deleted');
  });
}
