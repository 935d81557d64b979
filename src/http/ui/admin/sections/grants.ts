import type { FastifyRequest } from 'fastify';
import { items, num, problemOf, str, strings, type AdminApi, type ApiAnswer } from '../admin-api.js';
import type { Console, ConsoleRouter } from '../console-router.js';
import {
  confirmRevokeGrantPage,
  grantsPage,
  type GrantRow,
  type GrantsSearch,
} from '../../pages/admin/grants-pages.js';
import { field, sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'grant-revoked': 'The grant was revoked: its tokens no longer work.',
};

/** A page to return to after a revocation: the console's grants list or a user's page, nothing else. */
const BACK = /^\/admin\/(?:grants(?:\?[A-Za-z0-9=&%._~+-]*)?|users\/[A-Za-z0-9%._~-]+)$/;
export const safeBack = (back: string | undefined, fallback = '/admin/grants'): string =>
  back !== undefined && BACK.test(back) ? back : fallback;

/**
 * /v1's grants (GET …/grants) as rows, with their clients' and users' names: each distinct one read
 * once through /v1 (a page holds a few), its id standing in when it cannot be read (deleted meanwhile).
 */
export async function grantRows(
  api: AdminApi,
  grants: readonly Record<string, unknown>[],
  known: { clientName?: string; username?: string } = {},
): Promise<GrantRow[]> {
  const names = async (ids: string[], read: (id: string) => Promise<string | undefined>) => {
    const found = new Map<string, string>();
    for (const id of new Set(ids)) found.set(id, (await read(id)) ?? id);
    return found;
  };
  const readName = (path: string, key: string) => async (id: string) => {
    const answer = await api.get(`${path}/${encodeURIComponent(id)}`);
    return answer.status === 200 ? str(answer.body, key) : undefined;
  };
  const clients =
    known.clientName === undefined
      ? await names(
          grants.map((grant) => str(grant, 'client_id')),
          readName('/clients', 'name'),
        )
      : undefined;
  const users =
    known.username === undefined
      ? await names(
          grants.map((grant) => str(grant, 'user_id')),
          readName('/users', 'username'),
        )
      : undefined;
  return grants.map((grant) => ({
    id: str(grant, 'id'),
    clientId: str(grant, 'client_id'),
    clientName: known.clientName ?? clients?.get(str(grant, 'client_id')) ?? str(grant, 'client_id'),
    userId: str(grant, 'user_id'),
    username: known.username ?? users?.get(str(grant, 'user_id')) ?? str(grant, 'user_id'),
    scopes: strings(grant, 'scopes'),
    createdAt: str(grant, 'created_at'),
    expiresAt: str(grant, 'expires_at'),
  }));
}

/**
 * The Grants section (decision 42): a user's or a client's standing grants, found by the user's name or
 * the client's id through /v1 (`/users?username=`, `/users/{id}/grants`, `/clients/{id}/grants`), and
 * "Revoke…" with its confirmation page, which DELETEs `/users/{id}/grants/{grantId}`.
 */
export function registerGrants(router: ConsoleRouter): void {
  const grantsPath = `${router.adminPath}/grants`;

  /**
   * The page of grants a search names (the API pages them: `limit`, `offset`, `total`), or the API's
   * answer when it is no success (404 is "none found").
   */
  async function find(
    c: Console,
    search: GrantsSearch,
    offset: number,
  ): Promise<
    | { grants: Record<string, unknown>[]; total: number; known: { clientName?: string; username?: string } }
    | ApiAnswer
  > {
    const paging = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    if (search.username !== '') {
      const found = await c.api.get(
        `/users?${new URLSearchParams({ username: search.username }).toString()}`,
      );
      if (found.status !== 200) return found;
      const user = items(found.body)[0];
      if (user === undefined) return { grants: [], total: 0, known: {} };
      if (search.clientId !== '') paging.set('client_id', search.clientId);
      const answer = await c.api.get(
        `/users/${encodeURIComponent(str(user, 'id'))}/grants?${paging.toString()}`,
      );
      if (answer.status !== 200) return answer;
      return {
        grants: items(answer.body),
        total: num(answer.body, 'total') ?? 0,
        known: { username: str(user, 'username') },
      };
    }
    const answer = await c.api.get(
      `/clients/${encodeURIComponent(search.clientId)}/grants?${paging.toString()}`,
    );
    if (answer.status === 404) return { grants: [], total: 0, known: {} };
    if (answer.status !== 200) return answer;
    return { grants: items(answer.body), total: num(answer.body, 'total') ?? 0, known: {} };
  }

  router.page(grantsPath, async (request, reply, c) => {
    const search: GrantsSearch = {
      username: router.query(request, 'username').trim(),
      clientId: router.query(request, 'client_id').trim(),
    };
    const offset = router.offset(request);
    const notice = router.noticeOf(request, NOTICES);
    // Where a revocation returns: this very list, without its notice.
    const query = new URLSearchParams();
    if (search.username !== '') query.set('username', search.username);
    if (search.clientId !== '') query.set('client_id', search.clientId);
    if (offset > 0) query.set('offset', String(offset));
    const back = query.size === 0 ? grantsPath : `${grantsPath}?${query.toString()}`;
    const common = {
      search,
      offset,
      limit: router.pageSize,
      back: safeBack(back),
      ...(notice !== undefined ? { notice } : {}),
    };
    if (search.username === '' && search.clientId === '') {
      return sendPage(reply, 200, grantsPage(c.frame, { ...common, total: 0 }));
    }
    const found = await find(c, search, offset);
    if ('status' in found) return router.failed(request, reply, c, found, 'grants');
    // One page of one user's or one client's grants, its names read for that page.
    return sendPage(
      reply,
      200,
      grantsPage(c.frame, {
        ...common,
        rows: await grantRows(c.api, found.grants, found.known),
        total: found.total,
      }),
    );
  });

  const revokePath = `${grantsPath}/:id/revoke`;
  router.page(revokePath, async (request, reply, c) => {
    const userId = router.query(request, 'user');
    const back = safeBack(router.query(request, 'back'));
    const answer = await c.api.get(`/users/${encodeURIComponent(userId)}/grants`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'grants');
    const grant = items(answer.body).find((item) => str(item, 'id') === router.param(request));
    if (grant === undefined) {
      return router.failed(
        request,
        reply,
        c,
        { status: 404, body: { detail: 'this grant is no longer standing: it was revoked or has ended' } },
        'grants',
      );
    }
    const [row] = await grantRows(c.api, [grant]);
    return sendPage(reply, 200, confirmRevokeGrantPage(c.frame, row!, back));
  });

  router.action(
    revokePath,
    (request: FastifyRequest) => safeBack(field(request.body, 'back')),
    async (request, reply, c) => {
      const userId = field(request.body, 'user') ?? '';
      const back = safeBack(field(request.body, 'back'));
      const answer = await c.api.request(
        'DELETE',
        `/users/${encodeURIComponent(userId)}/grants/${encodeURIComponent(router.param(request))}`,
      );
      if (answer.status !== 204) {
        return problemOf(answer) === undefined
          ? router.see(reply, back)
          : router.failed(request, reply, c, answer, 'grants');
      }
      return reply.redirect(`${router.base}${back}${back.includes('?') ? '&' : '?'}done=grant-revoked`, 303);
    },
  );
}

/** The notices of a revocation, for the pages a revocation returns to. */
export const GRANT_NOTICES = NOTICES;
