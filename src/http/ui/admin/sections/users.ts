import type { FastifyReply, FastifyRequest } from 'fastify';
import { items, num, problemOf, str, type ApiProblem } from '../admin-api.js';
import type { Console, ConsoleRouter } from '../console-router.js';
import {
  confirmResetSecondFactorsPage,
  newUserPage,
  userPage,
  usersPage,
  type SessionRow,
  type UserFormValues,
  type UserPageInput,
  type UserRow,
} from '../../pages/admin/users-pages.js';
import { deviceName } from '../../security/device-name.js';
import { field, sendPage } from '../../ui-context.js';
import { GRANT_NOTICES, grantRows } from './grants.js';

const NOTICES: Readonly<Record<string, string>> = {
  'user-created': 'The user was created.',
  'user-saved': 'The user was saved.',
  'user-disabled': 'The user was disabled and cannot sign in.',
  'user-enabled': 'The user was enabled.',
  'reset-link-sent': 'A link to choose a new password is on its way to the user’s email address.',
  'second-factors-reset': 'The user’s authenticator app and recovery codes were removed.',
  'session-ended': 'The user was signed out of that session.',
  'sessions-ended': 'The user was signed out everywhere.',
  ...GRANT_NOTICES,
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
    secondFactors: {
      totp: items(value, 'sign_in_methods').some((method) => str(method, 'method') === 'totp'),
      recoveryCodes: countOf(value, 'recovery-codes'),
      passkeys: countOf(value, 'passkey'),
    },
  };
}

/** How many of a method a user has (sign_in_methods' `count`), 0 for none. */
function countOf(user: unknown, method: string): number {
  const line = items(user, 'sign_in_methods').find((item) => str(item, 'method') === method);
  return line === undefined ? 0 : (num(line, 'count') ?? 1);
}

function sessionRow(value: unknown): SessionRow {
  const userAgent = str(value, 'user_agent');
  return {
    sid: str(value, 'id'),
    device: deviceName(userAgent === '' ? undefined : userAgent),
    address: str(value, 'address'),
    createdAt: str(value, 'created_at'),
    lastActiveAt: str(value, 'last_active_at'),
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

  /**
   * The user's page: the user, their sessions and their grants, each a /v1 read; `status` and `extra`
   * for a form the API refused (its problem shown next to its field).
   */
  async function showUser(
    request: FastifyRequest,
    reply: FastifyReply,
    c: Console,
    status: number,
    extra: Partial<Pick<UserPageInput, 'values' | 'problem' | 'resetProblem' | 'resetEmail'>> = {},
  ): Promise<FastifyReply> {
    const id = encodeURIComponent(router.param(request));
    const answer = await c.api.get(`/users/${id}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'users');
    const sessions = await c.api.get(`/users/${id}/sessions`);
    if (sessions.status !== 200) return router.failed(request, reply, c, sessions, 'users');
    const grants = await c.api.get(`/users/${id}/grants`);
    if (grants.status !== 200) return router.failed(request, reply, c, grants, 'users');
    const row = userRow(answer.body);
    const notice = status === 200 ? router.noticeOf(request, NOTICES) : undefined;
    return sendPage(
      reply,
      status,
      userPage(c.frame, {
        user: row,
        values: userValues(row),
        sessions: items(sessions.body).map(sessionRow),
        grants: await grantRows(c.api, items(grants.body), { username: row.username }),
        ...(notice !== undefined ? { notice } : {}),
        ...extra,
      }),
    );
  }

  router.page(userPath, (request, reply, c) => showUser(request, reply, c, 200));

  router.action(userPath, userBack, async (request, reply, c) => {
    const id = encodeURIComponent(router.param(request));
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
    if (problem !== undefined) return showUser(request, reply, c, answer.status, { values, problem });
    return router.see(reply, userBack(request), 'user-saved');
  });

  // "Reset password": a link by mail (decision 35); a user without an address is given one first.
  router.action(`${userPath}/password-reset`, userBack, async (request, reply, c) => {
    const id = encodeURIComponent(router.param(request));
    const email = field(request.body, 'reset_email');
    const refused = (answer: { status: number; body: unknown }) =>
      showUser(request, reply, c, answer.status, {
        resetProblem: problemOf(answer) as ApiProblem,
        ...(email !== undefined ? { resetEmail: email } : {}),
      });
    if (email !== undefined) {
      const saved = await c.api.request('PATCH', `/users/${id}`, { email });
      if (saved.status === 401 || saved.status === 403 || saved.status === 404) {
        return router.failed(request, reply, c, saved, 'users');
      }
      if (problemOf(saved) !== undefined) return refused(saved);
    }
    const answer = await c.api.request('POST', `/users/${id}/password-resets`);
    if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
      return router.failed(request, reply, c, answer, 'users');
    }
    if (problemOf(answer) !== undefined) return refused(answer);
    return router.see(reply, userBack(request), 'reset-link-sent');
  });

  // "Reset second factors…": the confirmation says what goes and what stays; the POST does it.
  router.page(`${userPath}/second-factors`, async (request, reply, c) => {
    const answer = await c.api.get(`/users/${encodeURIComponent(router.param(request))}`);
    if (answer.status !== 200) return router.failed(request, reply, c, answer, 'users');
    return sendPage(reply, 200, confirmResetSecondFactorsPage(c.frame, userRow(answer.body)));
  });
  router.action(`${userPath}/second-factors`, userBack, async (request, reply, c) => {
    const answer = await c.api.request(
      'DELETE',
      `/users/${encodeURIComponent(router.param(request))}/second-factors`,
    );
    if (answer.status !== 204) return router.failed(request, reply, c, answer, 'users');
    return router.see(reply, userBack(request), 'second-factors-reset');
  });

  // Sessions: "Sign out" one (by its `sid`, decision 37) or all. One already ended is no error here.
  router.action(`${userPath}/sessions/:sid/sign-out`, userBack, async (request, reply, c) => {
    const answer = await c.api.request(
      'DELETE',
      `/users/${encodeURIComponent(router.param(request))}/sessions/${encodeURIComponent(router.param(request, 'sid'))}`,
    );
    if (answer.status !== 204 && !(answer.status === 404 && problemOf(answer)?.field === 'sid')) {
      return router.failed(request, reply, c, answer, 'users');
    }
    return router.see(reply, userBack(request), 'session-ended');
  });
  router.action(`${userPath}/sessions/sign-out`, userBack, async (request, reply, c) => {
    const answer = await c.api.request(
      'DELETE',
      `/users/${encodeURIComponent(router.param(request))}/sessions`,
    );
    if (answer.status !== 204) return router.failed(request, reply, c, answer, 'users');
    return router.see(reply, userBack(request), 'sessions-ended');
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
