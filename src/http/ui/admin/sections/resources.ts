import type { FastifyReply, FastifyRequest } from 'fastify';
import { items, num, problemOf, str, strings, type ApiProblem } from '../admin-api.js';
import type { Console, ConsoleRouter } from '../console-router.js';
import {
  confirmDeleteResourcePage,
  resourcePage,
  resourcesPage,
  type ResourceFormValues,
  type ResourceRow,
} from '../../pages/admin/resources-pages.js';
import { field, sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'resource-created': 'The resource was created.',
  'resource-saved': 'The resource was saved.',
  'resource-deleted': 'The resource was deleted.',
};

function resourceRow(value: unknown): ResourceRow {
  return {
    uri: str(value, 'uri'),
    name: str(value, 'name'),
    scopes: strings(value, 'scopes'),
    createdAt: str(value, 'created_at'),
  };
}

const split = (text: string) => text.split(/\s+/).filter((part) => part !== '');

function formValues(body: unknown): ResourceFormValues {
  return {
    uri: (field(body, 'uri') ?? '').trim(),
    name: field(body, 'name') ?? '',
    scopes: field(body, 'scopes') ?? '',
  };
}

/**
 * The console's resource servers (decision 42), over /v1/resources: searched and paged by the API.
 * The URI travels as one path segment (encodeURIComponent), in the console's paths as in the API's.
 */
export function registerResources(router: ConsoleRouter): void {
  const listPath = `${router.adminPath}/resources`;
  const itemPath = `${listPath}/:uri`;
  const uriOf = (request: FastifyRequest) => router.param(request, 'uri');
  const apiPath = (request: FastifyRequest) => `/resources/${encodeURIComponent(uriOf(request))}`;
  const back = (request: FastifyRequest) => `${listPath}/${encodeURIComponent(uriOf(request))}`;

  async function list(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    form: { values: ResourceFormValues; problem?: ApiProblem; status?: number },
  ): Promise<FastifyReply> {
    const search = router.query(request, 'search').trim();
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    if (search !== '') params.set('search', search);
    const answer = await c.api.get(`/resources?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'resources');
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      form.status ?? 200,
      resourcesPage(c.frame, {
        rows: items(answer.body).map(resourceRow),
        search,
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
    list(request, reply, c, { values: { uri: '', name: '', scopes: '' } }),
  );

  router.action(
    listPath,
    () => listPath,
    async (request, reply, c) => {
      const values = formValues(request.body);
      const name = values.name.trim();
      const answer = await c.api.request('POST', '/resources', {
        uri: values.uri,
        ...(name === '' ? {} : { name }),
        scopes: split(values.scopes),
      });
      if (answer.status === 401 || answer.status === 403)
        return router.failed(request, reply, c, answer, 'resources');
      const problem = problemOf(answer);
      if (problem !== undefined) return list(request, reply, c, { values, problem, status: answer.status });
      // The API answers with the canonical URI: the page is named by it.
      return router.see(
        reply,
        `${listPath}/${encodeURIComponent(str(answer.body, 'uri'))}`,
        'resource-created',
      );
    },
  );

  router.page(itemPath, async (request, reply, c) => {
    const answer = await c.api.get(apiPath(request));
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'resources');
    const resource = resourceRow(answer.body);
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      resourcePage(c.frame, {
        resource,
        values: { uri: resource.uri, name: resource.name, scopes: resource.scopes.join(' ') },
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  router.action(itemPath, back, async (request, reply, c) => {
    const values = formValues(request.body);
    const name = values.name.trim();
    const answer = await c.api.request('PATCH', apiPath(request), {
      name: name === '' ? null : name,
      scopes: split(values.scopes),
    });
    if (answer.status === 401 || answer.status === 403 || answer.status === 404)
      return router.failed(request, reply, c, answer, 'resources');
    const problem = problemOf(answer);
    if (problem !== undefined) {
      const current = await c.api.get(apiPath(request));
      if (current.status !== 200) return router.failed(request, reply, c, current, 'resources');
      return sendPage(
        reply,
        answer.status,
        resourcePage(c.frame, { resource: resourceRow(current.body), values, problem }),
      );
    }
    return router.see(reply, `${listPath}/${encodeURIComponent(str(answer.body, 'uri'))}`, 'resource-saved');
  });

  router.page(`${itemPath}/delete`, async (request, reply, c) => {
    const answer = await c.api.get(apiPath(request));
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'resources');
    return sendPage(reply, 200, confirmDeleteResourcePage(c.frame, resourceRow(answer.body)));
  });

  router.action(`${itemPath}/delete`, back, async (request, reply, c) => {
    const answer = await c.api.request('DELETE', apiPath(request));
    if (answer.status !== 204) return router.failed(request, reply, c, answer, 'resources');
    return router.see(reply, listPath, 'resource-deleted');
  });
}
