import type { Credentials, RunSpec } from './types.js';

const FORM = 'application/x-www-form-urlencoded';

/** RFC 6749 §2.3.1: id and secret are form-url-encoded, joined by ":", then base64-encoded. */
export function basicAuth(credentials: Credentials): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(credentials.id)}:${encode(credentials.secret)}`).toString('base64')}`;
}

export function clientCredentialsRequest(client: Credentials): RunSpec {
  return {
    path: '/token',
    method: 'POST',
    headers: { authorization: basicAuth(client), 'content-type': FORM },
    body: 'grant_type=client_credentials',
  };
}

/**
 * Password grant, one user per connection: Gatehouse counts every attempt per user name before the
 * password is checked (a guessing throttle), so many concurrent logins of one user would be refused.
 */
export function passwordRequest(
  client: Credentials,
  users: Array<{ username: string; password: string }>,
): RunSpec {
  const bodies = users.map((user) =>
    new URLSearchParams({
      grant_type: 'password',
      username: user.username,
      password: user.password,
    }).toString(),
  );
  return {
    path: '/token',
    method: 'POST',
    headers: { authorization: basicAuth(client), 'content-type': FORM },
    bodies,
  };
}

/** The peer accepts the same request as Gatehouse's client_credentials scenario. */
export function bareRequest(client: Credentials): RunSpec {
  return clientCredentialsRequest(client);
}
