import type { FastifyRequest } from 'fastify';
import { items, num, problemOf, str } from '../admin-api.js';
import type { ConsoleRouter } from '../console-router.js';
import {
  newUserPage,
  userPage,
  usersPage,
  type UserFormValues,
  type UserRow,
} from '../../pages/admin/users-pages.js';
import { field, sendPage } from '../../ui-context.js';

const NOTICES: Readonly<Record<string, string>> = {
  'user-created': 'The user was created.',
  'user-saved': 'The user was saved.',
  'user-disabled': 'The user was disabled and cannot sign in.',
  'user-enabled': 'The user was enabled.',
};

function userRow(value: unknown): UserRow {
  return {
    id: str(value, 'id'),
    username: str(value, 'username'),
    email: str(value, 'email'),
    name: str(value, 'name'),
    admin: str(value, 'admin') === 'true',
    disabled: str(value, 'disabled') === 'true',
    methods: items(value, 'sign_in_methods').map(
      (method) => `${str(method, 'method')} (${str(method, 'description')})`,
    ),
    sessions: num(value, 'sessions'),
  };
}

const userValues = (row: UserRow): UserFormValues => ({
  username: row.username,
  email: row.email,
  name: row.name,
  admin: row.admin,
});

function userForm(body: unknown): { values: UserFormValues; password: string } {
  return {
    values: {
      username: field(body, 'username') ?? '',
      email: field(body, 'email') ?? '',
      name: field(body, 'name') ?? '',
      admin: field(body, 'admin') === 'true',
    },
    password: field(body, 'password') ?? '',
  };
}

export function registerUsers(router: ConsoleRouter): void {
  router.page(`${router.adminPath}/users`, async (request, reply, c) => {
    const username = router.query(request, 'username').trim();
    const offset = router.offset(request);
    const params = new URLSearchParams({ limit: String(router.pageSize), offset: String(offset) });
    if (username !== '') params.set('username', username);
    const answer = await c.api.get(`/users?${params.toString()}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'users');
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      usersPage(c.frame, {
        rows: items(answer.body).map(userRow),
        username,
        offset,
        limit: router.pageSize,
        total: num(answer.body, 'total') ?? 0,
        ...(notice !== undefined ? { notice } : {}),
      }),
    );
  });

  const emptyUser: UserFormValues = { username: '', email: '', name: '', admin: false };
  router.page(`${router.adminPath}/users/new`, async (_request, reply, c) =>
    sendPage(reply, 200, newUserPage(c.frame, emptyUser)),
  );

  router.action(
    `${router.adminPath}/users/new`,
    () => `${router.adminPath}/users/new`,
    async (request, reply, c) => {
      const { values, password } = userForm(request.body);
      const answer = await c.api.request('POST', '/users', {
        username: values.username,
        password,
        ...(values.email !== '' ? { email: values.email } : {}),
        ...(values.name !== '' ? { name: values.name } : {}),
        admin: values.admin,
      });
      if (answer.status === 401 || answer.status === 403)
        return router.failed(request, reply, c, answer, 'users');
      const problem = problemOf(answer);
      if (problem !== undefined) return sendPage(reply, answer.status, newUserPage(c.frame, values, problem));
      return router.see(
        reply,
        `${router.adminPath}/users/${encodeURIComponent(str(answer.body, 'id'))}`,
        'user-created',
      );
    },
  );

  const userPath = `${router.adminPath}/users/:id`;
  const userBack = (request: FastifyRequest) =>
    `${router.adminPath}/users/${encodeURIComponent(router.param(request))}`;

  router.page(userPath, async (request, reply, c) => {
    const answer = await c.api.get(`/users/${encodeURIComponent(router.param(request))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'users');
    const row = userRow(answer.body);
    const notice = router.noticeOf(request, NOTICES);
    return sendPage(
      reply,
      200,
      userPage(c.frame, { user: row, values: userValues(row), ...(notice !== undefined ? { notice } : {}) }),
    );
  });

  router.action(userPath, userBack, async (request, reply, c) => {
    const id = encodeURIComponent(router.param(request));
    const current = await c.api.get(`/users/${id}`);
    if (current.status !== 200) return router.failed(request, reply, c, current, 'users');
    const { values, password } = userForm(request.body);
    const answer = await c.api.request('PATCH', `/users/${id}`, {
      username: values.username,
      email: values.email === '' ? null : values.email,
      name: values.name === '' ? null : values.name,
      admin: values.admin,
      ...(password !== '' ? { password } : {}),
    });
    if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
      return router.failed(request, reply, c, answer, 'users');
    }
    const problem = problemOf(answer);
    if (problem !== undefined) {
      return sendPage(
        reply,
        answer.status,
        userPage(c.frame, { user: userRow(current.body), values, problem }),
      );
    }
    return router.see(reply, userBack(request), 'user-saved');
  });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    router.action(`${userPath}/${verb}`, userBack, async (request, reply, c) => {
      const answer = await c.api.request('PATCH', `/users/${encodeURIComponent(router.param(request))}`, {
        disabled,
      });
      if (answer.status >= 300) return router.failed(request, reply, c, answer, 'users');
      return router.see(reply, userBack(request), disabled ? 'user-disabled' : 'user-enabled');
    });
  }
}
