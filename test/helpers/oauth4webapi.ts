import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import type { GatehouseOptions } from '../../src/compose/gatehouse.js';
import type { ConfigInput } from '../../src/config.js';
import type { ClientInput } from '../../src/core/clients/client-registry.js';
import type { Client, User } from '../../src/core/model.js';
import { FormBrowser } from './form-browser.js';
import type { Backend } from './backends.js';
import type { HttpResponse } from './https-client.js';
import { startTestServer, type TestServer } from './server.js';
import { trustingFetch } from './trusting-fetch.js';
import { freePort } from './spawned-server.js';

// What every oauth4webapi interop file sets up the same way: a server at an https://localhost issuer,
// the library's discovery of it, a fetch that trusts the server's certificate, a registered client as
// the library names it, and the user's part in the browser (sign-in, then the consent page).

/** A test server as oauth4webapi sees it, after discovery. */
export interface LibraryServer {
  server: TestServer;
  issuer: URL;
  as: oauth.AuthorizationServer;
  /** The request options every library call takes: the trusting fetch. */
  options(): { [oauth.customFetch]: ReturnType<typeof trustingFetch>['fetch'] };
  close(): Promise<void>;
}

export interface LibraryServerOptions {
  /** Which metadata document the library reads (its default is OpenID Connect discovery). */
  algorithm?: 'oauth2' | 'oidc';
  config?: ConfigInput;
  gatehouse?: Pick<GatehouseOptions, 'logger' | 'outboundCa'>;
}

/**
 * Starts a server whose issuer is the URL the library fetches the metadata from: oauth4webapi requires
 * the two to be the same (RFC 8414 §3.3), so the port is chosen before the server starts.
 */
export async function startLibraryServer(
  backend: Backend,
  { algorithm, config = {}, gatehouse = {} }: LibraryServerOptions = {},
): Promise<LibraryServer> {
  const port = await freePort();
  const issuer = new URL(`https://localhost:${port}`);
  const server = await startTestServer(
    backend,
    { ...config, port, issuer: issuer.origin },
    { ...gatehouse, transport: 'https' },
  );
  const https = trustingFetch(server.ca);
  const options = () => ({ [oauth.customFetch]: https.fetch });
  try {
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...options(), ...(algorithm ? { algorithm } : {}) }),
    );
    return {
      server,
      issuer,
      as,
      options,
      async close() {
        https.close();
        await server.close();
      },
    };
  } catch (error) {
    https.close();
    await server.close();
    throw error;
  }
}

/** A client registered on the server, as the library names and authenticates it. */
export interface LibraryClient {
  registered: Client;
  secret: string;
  client: oauth.Client;
  authentication: oauth.ClientAuth;
}

/**
 * Registers a client; a public one authenticates with `none`, any other with client_secret_basic
 * unless `authentication` is given (private_key_jwt, made by the library).
 */
export async function registerLibraryClient(
  server: TestServer,
  input: Partial<ClientInput> & { name?: string },
  authentication?: oauth.ClientAuth,
): Promise<LibraryClient> {
  const { client, secret } = await server.client(input);
  return {
    registered: client,
    secret,
    client: { client_id: client.id },
    authentication:
      authentication ?? (input.public === true ? oauth.None() : oauth.ClientSecretBasic(secret)),
  };
}

/** Signs in on the sign-in page `page` sent the browser to; returns where the server sends it next. */
export async function signInFrom(
  browser: FormBrowser,
  page: HttpResponse,
  who: { user: User; password: string },
): Promise<string> {
  assert.equal(page.status, 200, page.text.slice(0, 300));
  const signedIn = await browser.post('/sign-in', {
    csrf_token: FormBrowser.hidden(page, 'csrf_token'),
    next: FormBrowser.hidden(page, 'next'),
    username: who.user.username,
    password: who.password,
  });
  assert.equal(signedIn.status, 303);
  return String(signedIn.headers.location);
}

/**
 * The user's part of an authorization request, as a browser would do it by HTTP: the authorization
 * URL, sign-in, then Allow on the consent page with `scope`; returns the redirect to the client.
 */
export async function signInAndAllow(
  server: TestServer,
  who: { user: User; password: string },
  authorizationUrl: URL,
  scope: string[],
): Promise<URL> {
  const browser = new FormBrowser(server);
  const signInPage = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
  const consentPage = await browser.get(await signInFrom(browser, signInPage, who));
  const allowed = await browser.post('/consent', {
    csrf_token: FormBrowser.hidden(consentPage, 'csrf_token'),
    request: FormBrowser.hidden(consentPage, 'request'),
    decision: 'allow',
    lifetime: '3600',
    scope,
  });
  assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
  return new URL(String(allowed.headers.location));
}

/** The authorization URL for a pushed request (RFC 9126 §4): client_id and request_uri only. */
export function pushedAuthorizationUrl(
  as: oauth.AuthorizationServer,
  clientId: string,
  requestUri: string,
): URL {
  const url = new URL(String(as.authorization_endpoint));
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('request_uri', requestUri);
  return url;
}
