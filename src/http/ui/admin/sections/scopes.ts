import { isProtectedScope } from '../../../../core/scopes/scope-registry.js';
import { items, num, problemOf, str } from '../admin-api.js';
import type { Console, ConsoleRouter } from '../console-router.js';
import {
  confirmDeleteScopePage,
  scopePage,
  scopesPage,
  type ScopeFormValues,
  type ScopeRow,
} from '../../pages/admin/scopes-pages.js';
import { field, sendPage } from '../../ui-context.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiProblem } from '../admin-api.js';

const NOTICES: Readonly<Record<string, string>> = {
  'scope-created': 'The scope was created.',
  'scope-saved': 'The scope was saved.',
  'scope-deleted': 'The scope was deleted.',
};

function scopeRow(value: unknown): ScopeRow {
  const name = str(value, 'name');
  return {
    name,
    description: str(value, 'description'),
    createdAt: str(value, 'created_at'),
    // Shown, not enforced: the API refuses to delete these (409) whatever the page offers.
    builtIn: isProtectedScope(name),
  };
}

/** The console's scopes (decision 42), over /v1/scopes: searched and paged by the API. */
export function registerScopes(router: ConsoleRouter): void {
  const listPath = `${router.adminPath}/scopes`;
  const itemPath = `${listPath}/:name`;
  const nameOf = (request: FastifyRequest) => router.param(request, 'name');
  const back = (request: FastifyRequest) => `${listPath}/${encodeURIComponent(nameOf(request))}`;

  /** The list page: its search and page from the query, and the form's values and problem if any. */
  async function list(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    form: { values: ScopeFormValues; problem?: ApiProblem; status?: number },
  ): Promise<FastifyReply> {
    const search = router.query(request, 'search').trim();
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    if (search !== '') params.set('search', search);
    const answer = await c.api.get(`/scopes?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'scopes');
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      form.status ?? 200,
      scopesPage(c.frame, {
        rows: items(answer.body).map(scopeRow),
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
    list(request, reply, c, { values: { name: '', description: '' } }),
  );

  router.action(
    listPath,
    () => listPath,
    async (request, reply, c) => {
      const values = {
        name: (field(request.body, 'name') ?? '').trim(),
        description: field(request.body, 'description') ?? '',
      };
      const description = values.description.trim();
      const answer = await c.api.request('POST', '/scopes', {
        name: values.name,
        ...(description === '' ? {} : { description }),
      });
      if (answer.status === 401 || answer.status === 403)
        return router.failed(request, reply, c, answer, 'scopes');
      const problem = problemOf(answer);
      if (problem !== undefined) return list(request, reply, c, { values, problem, status: answer.status });
      return router.see(
        reply,
        `${listPath}/${encodeURIComponent(str(answer.body, 'name'))}`,
        'scope-created',
      );
    },
  );

  router.page(itemPath, async (request, reply, c) => {
    const answer = await c.api.get(`/scopes/${encodeURIComponent(nameOf(request))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'scopes');
    const scope = scopeRow(answer.body);
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      scopePage(c.frame, {
        scope,
        description: scope.description,
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  router.action(itemPath, back, async (request, reply, c) => {
    const path = `/scopes/${encodeURIComponent(nameOf(request))}`;
    const description = field(request.body, 'description') ?? '';
    const answer = await c.api.request('PATCH', path, { description: description.trim() });
    if (answer.status === 401 || answer.status === 403 || answer.status === 404)
      return router.failed(request, reply, c, answer, 'scopes');
    const problem = problemOf(answer);
    if (problem !== undefined) {
      const current = await c.api.get(path);
      if (current.status !== 200) return router.failed(request, reply, c, current, 'scopes');
      return sendPage(
        reply,
        answer.status,
        scopePage(c.frame, { scope: scopeRow(current.body), description, problem }),
      );
    }
    return router.see(reply, back(request), 'scope-saved');
  });

  router.page(`${itemPath}/delete`, async (request, reply, c) => {
    const answer = await c.api.get(`/scopes/${encodeURIComponent(nameOf(request))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'scopes');
    return sendPage(reply, 200, confirmDeleteScopePage(c.frame, scopeRow(answer.body)));
  });

  router.action(`${itemPath}/delete`, back, async (request, reply, c) => {
    const answer = await c.api.request('DELETE', `/scopes/${encodeURIComponent(nameOf(request))}`);
    if (answer.status !== 204) return router.failed(request, reply, c, answer, 'scopes');
    return router.see(reply, listPath, 'scope-deleted');
  });
}
