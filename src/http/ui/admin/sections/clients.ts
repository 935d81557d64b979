import type { FastifyRequest } from 'fastify';
import { items, num, problemOf, str, strings } from '../admin-api.js';
import type { ConsoleRouter } from '../console-router.js';
import {
  clientPage,
  clientsPage,
  confirmDeleteClientPage,
  newClientPage,
  type ClientFormValues,
  type ClientRow,
} from '../../pages/admin/clients-pages.js';
import { field, fields, sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'client-deleted': 'The client was deleted.',
  'client-saved': 'The client was saved.',
};

function clientRow(value: unknown): ClientRow {
  return {
    id: str(value, 'client_id'),
    name: str(value, 'name'),
    public: str(value, 'public') === 'true',
    redirectUris: strings(value, 'redirect_uris'),
    scopes: strings(value, 'scopes'),
    grantTypes: strings(value, 'grant_types'),
    registration: str(value, 'registration'),
    updatedAt: str(value, 'updated_at'),
    documentExpiresAt: str(value, 'document_expires_at'),
  };
}

const clientValues = (row: ClientRow): ClientFormValues => ({
  name: row.name,
  redirectUris: row.redirectUris.join('\n'),
  scopes: row.scopes.join(' '),
  grantTypes: row.grantTypes,
  public: row.public,
});

/** The form's client fields as /v1/clients takes them; what is left empty is left to the API's defaults. */
function clientForm(body: unknown): { values: ClientFormValues; input: Record<string, unknown> } {
  const values: ClientFormValues = {
    name: field(body, 'name') ?? '',
    redirectUris: field(body, 'redirect_uris') ?? '',
    scopes: field(body, 'scopes') ?? '',
    grantTypes: fields(body, 'grant_types'),
    public: field(body, 'public') === 'true',
  };
  const split = (text: string) => text.split(/\s+/).filter((part) => part !== '');
  const input: Record<string, unknown> = {
    name: values.name,
    redirect_uris: split(values.redirectUris),
    scopes: split(values.scopes),
    public: values.public,
  };
  if (values.grantTypes.length > 0) input['grant_types'] = values.grantTypes;
  return { values, input };
}

export function registerClients(router: ConsoleRouter): void {
  router.page(`${router.adminPath}/clients`, async (request, reply, c) => {
    const name = router.query(request, 'name').trim();
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    if (name !== '') params.set('name', name);
    const answer = await c.api.get(`/clients?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'clients');
    return sendPage(
      reply,
      200,
      clientsPage(c.frame, {
        rows: items(answer.body).map(clientRow),
        name,
        offset,
        limit: router.pageSize,
        total: num(answer.body, 'total') ?? 0,
        ...(router.noticeOf(request, NOTICES) !== undefined
          ? { notice: router.noticeOf(request, NOTICES) }
          : {}),
      }),
    );
  });

  const emptyClient: ClientFormValues = {
    name: '',
    redirectUris: '',
    scopes: '',
    grantTypes: [],
    public: false,
  };
  router.page(`${router.adminPath}/clients/new`, async (_request, reply, c) =>
    sendPage(reply, 200, newClientPage(c.frame, emptyClient)),
  );

  router.action(
    `${router.adminPath}/clients/new`,
    () => `${router.adminPath}/clients/new`,
    async (request, reply, c) => {
      const { values, input } = clientForm(request.body);
      const answer = await c.api.request('POST', '/clients', input);
      if (answer.status === 401 || answer.status === 403)
        return router.failed(request, reply, c, answer, 'clients');
      const problem = problemOf(answer);
      if (problem !== undefined)
        return sendPage(reply, answer.status, newClientPage(c.frame, values, problem));
      const row = clientRow(answer.body);
      const secret = str(answer.body, 'client_secret');
      return sendPage(
        reply,
        201,
        clientPage(c.frame, {
          client: row,
          values: clientValues(row),
          notice: 'The client was created.',
          ...(secret !== '' ? { secret } : {}),
        }),
      );
    },
  );

  const clientPath = `${router.adminPath}/clients/:id`;
  const clientBack = (request: FastifyRequest) =>
    `${router.adminPath}/clients/${encodeURIComponent(router.param(request))}`;

  router.page(clientPath, async (request, reply, c) => {
    const answer = await c.api.get(`/clients/${encodeURIComponent(router.param(request))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'clients');
    const row = clientRow(answer.body);
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      clientPage(c.frame, {
        client: row,
        values: clientValues(row),
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  router.action(clientPath, clientBack, async (request, reply, c) => {
    const id = encodeURIComponent(router.param(request));
    const current = await c.api.get(`/clients/${id}`);
    if (current.status !== 200) return router.failed(request, reply, c, current, 'clients');
    const { values, input } = clientForm(request.body);
    const answer = await c.api.request('PATCH', `/clients/${id}`, input);
    if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
      return router.failed(request, reply, c, answer, 'clients');
    }
    const problem = problemOf(answer);
    if (problem !== undefined) {
      return sendPage(
        reply,
        answer.status,
        clientPage(c.frame, { client: clientRow(current.body), values, problem }),
      );
    }
    const secret = str(answer.body, 'client_secret');
    if (secret === '') return router.see(reply, clientBack(request), 'client-saved');
    const row = clientRow(answer.body);
    return sendPage(
      reply,
      200,
      clientPage(c.frame, {
        client: row,
        values: clientValues(row),
        secret,
        notice: NOTICES['client-saved'],
      }),
    );
  });

  router.action(`${clientPath}/rotate-secret`, clientBack, async (request, reply, c) => {
    const id = encodeURIComponent(router.param(request));
    const answer = await c.api.request('POST', `/clients/${id}/rotate-secret`);
    if (answer.status !== 201) return router.failed(request, reply, c, answer, 'clients');
    const current = await c.api.get(`/clients/${id}`);
    if (current.status !== 200) return router.failed(request, reply, c, current, 'clients');
    const row = clientRow(current.body);
    return sendPage(
      reply,
      200,
      clientPage(c.frame, {
        client: row,
        values: clientValues(row),
        secret: str(answer.body, 'client_secret'),
        notice: 'A new secret was made; the old one no longer works.',
      }),
    );
  });

  router.page(`${clientPath}/delete`, async (request, reply, c) => {
    const answer = await c.api.get(`/clients/${encodeURIComponent(router.param(request))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'clients');
    return sendPage(reply, 200, confirmDeleteClientPage(c.frame, clientRow(answer.body)));
  });

  router.action(`${clientPath}/delete`, clientBack, async (request, reply, c) => {
    const answer = await c.api.request('DELETE', `/clients/${encodeURIComponent(router.param(request))}`);
    if (answer.status !== 204) return router.failed(request, reply, c, answer, 'clients');
    return router.see(reply, `${router.adminPath}/clients`, 'client-deleted');
  });
}
