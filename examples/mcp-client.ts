/**
 * An example MCP client (Model Context Protocol, Streamable HTTP transport) that signs its user in
 * through Gatehouse with the MCP TypeScript SDK's own OAuth client (`OAuthClientProvider`), then calls
 * a tool of the server. It knows nothing but the MCP server's URL:
 *
 *   1. the server answers 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728), whose
 *      document names Gatehouse as the authorization server;
 *   2. the SDK reads Gatehouse's metadata (RFC 8414) and registers this client (RFC 7591), a public
 *      client whose redirect URI is a loopback address this program listens on (RFC 8252 §7.3); or,
 *      given `--client-metadata-url`, and if the metadata says `client_id_metadata_document_supported`,
 *      it registers nothing: its client_id is that URL, whose Client ID Metadata Document
 *      (draft-ietf-oauth-client-id-metadata-document) Gatehouse fetches;
 *   3. it prints the authorization URL (code flow, PKCE S256, `resource=<the server's URL>`, RFC 8707)
 *      for the user to open; Gatehouse asks them to sign in and to allow, and sends the browser back
 *      to this program with the code;
 *   4. the SDK redeems the code, and the tool is called with the access token.
 *
 * Run it beside the example MCP server (examples/mcp-server.ts) and Gatehouse (see examples/README.md):
 *
 *   NODE_EXTRA_CA_CERTS=data/tls/cert.pem node dist/examples/mcp-client.js http://127.0.0.1:3001/mcp
 *
 * Arguments: the MCP server's URL (or MCP_SERVER_URL; default http://127.0.0.1:3001/mcp), `--tool NAME`
 * (default `whoami`), `--callback-port PORT` (or CALLBACK_PORT; default any free port),
 * `--client-metadata-url URL` (or CLIENT_METADATA_URL; default none: dynamic registration), and
 * `--print-client-metadata`, which prints the document to serve at that URL and exits.
 * NODE_EXTRA_CA_CERTS makes Node's fetch trust Gatehouse's development certificate; with a
 * certificate from a public CA, leave it out. The registration, the PKCE verifier and the tokens are
 * kept in memory only: each run registers and signs in again.
 *
 * The document's redirect URI is `http://127.0.0.1/callback`, without a port: the port this program
 * listens on is chosen when it runs, and RFC 8252 §7.3 has the authorization server accept any port
 * on a loopback redirect (Gatehouse does, for such clients). A server that compares ports too needs
 * `--callback-port` and that port in the document.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import {
  isHttpsUrl,
  UnauthorizedError,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const CALLBACK_PATH = '/callback';

/** What the client does that both ways of identifying it describe: a public client, PKCE, refresh. */
const CLIENT_SETTINGS = {
  // A public client (RFC 8252 §8.4: a program on the user's machine keeps no secret), which PKCE
  // protects; refresh_token so that the SDK can renew the access token without asking again.
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

/**
 * The name in the document. Not the server's own name: a client names itself, and Gatehouse refuses a
 * name that imitates its own from a party it does not know (decision 46).
 */
export const DOCUMENT_CLIENT_NAME = 'Example MCP client';

/**
 * The Client ID Metadata Document to serve at `url` (draft-ietf-oauth-client-id-metadata-document §4):
 * client registration metadata (RFC 7591 §2) whose `client_id` is the URL itself. Its one redirect URI
 * is the loopback callback without a port, any port being accepted there (RFC 8252 §7.3).
 */
export function clientMetadataDocument(url: string): OAuthClientMetadata & { client_id: string } {
  return {
    client_id: url,
    client_name: DOCUMENT_CLIENT_NAME,
    redirect_uris: [`http://127.0.0.1${CALLBACK_PATH}`],
    ...CLIENT_SETTINGS,
  };
}

/**
 * The client's side of OAuth, as the SDK asks an application to keep it: the registration, the PKCE
 * verifier, the `state` and the tokens of one session, in memory. `open` is how the authorization URL
 * reaches the user.
 */
export class InMemoryOAuthClientProvider implements OAuthClientProvider {
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier: string | undefined;
  constructor(
    private readonly redirect: string,
    private readonly open: (authorizationUrl: URL) => void | Promise<void>,
    /** RFC 6749 §10.12: the callback is taken only with the `state` this session sent. */
    readonly expectedState: string = randomBytes(16).toString('base64url'),
    private readonly clientName = 'Gatehouse example MCP client',
    /**
     * The URL of this client's Client ID Metadata Document: the SDK uses it as the client_id, instead
     * of registering, when the authorization server's metadata says `client_id_metadata_document_
     * supported: true`; otherwise it registers as without it.
     */
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }
  /** What dynamic registration (RFC 7591) sends. */
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.clientName, redirect_uris: [this.redirect], ...CLIENT_SETTINGS };
  }
  state(): string {
    return this.expectedState;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.information = information;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(authorizationUrl: URL): void | Promise<void> {
    return this.open(authorizationUrl);
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no authorization was started');
    return this.verifier;
  }
}

/** The loopback listener the browser comes back to (RFC 8252 §7.3), with the code it brings. */
interface Callback {
  redirectUrl: string;
  /** The code of the first answer whose state is ours; rejects on an error answer. */
  code: Promise<string>;
  close(): void;
}

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><p>${text}</p></html>`;

/** Listens on 127.0.0.1:`port` (0: any free port) for the authorization response. */
async function listenForCallback(port: number, expectedState: string): Promise<Callback> {
  let settle: { resolve(code: string): void; reject(error: Error): void } | undefined;
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited once the SDK has asked for the sign-in; a refusal that comes first is not left unhandled.
  code.catch(() => undefined);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, title: string, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(title, text));
    };
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return answer(404, 'Not found', '');
    // An answer for another session (or a forged one) is not ours: it changes nothing here.
    if (url.searchParams.get('state') !== expectedState) {
      return answer(400, 'Unexpected answer', 'This sign-in was not started by this program.');
    }
    const error = url.searchParams.get('error');
    if (error !== null) {
      answer(200, 'Not signed in', 'You can close this window.');
      const description = url.searchParams.get('error_description');
      return settle?.reject(
        new Error(`authorization failed: ${error}${description ? ` (${description})` : ''}`),
      );
    }
    const received = url.searchParams.get('code');
    if (received === null) return answer(400, 'Unexpected answer', 'The answer holds no code.');
    answer(200, 'Signed in', 'You can close this window and return to the terminal.');
    settle?.resolve(received);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${bound}${CALLBACK_PATH}`,
    code,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface McpClientExampleOptions {
  /** The MCP server's URL, e.g. `http://127.0.0.1:3001/mcp`: all the client needs to know. */
  serverUrl: string;
  /** The tool to call, without arguments. */
  tool?: string;
  /** The loopback port the browser returns to; 0 (the default) picks a free one. */
  callbackPort?: number;
  /**
   * The https URL of this client's Client ID Metadata Document (see clientMetadataDocument), used as
   * its client_id where the authorization server takes one; without it, the client registers.
   */
  clientMetadataUrl?: string;
  /** Shows the authorization URL to the user; by default printed on standard output. */
  open?: (authorizationUrl: URL) => void | Promise<void>;
}

/** Connects to the MCP server, signing in through Gatehouse if it asks for a token, and calls the tool. */
export async function callToolSignedIn(options: McpClientExampleOptions): Promise<CallToolResult> {
  const open =
    options.open ??
    ((url: URL) => {
      console.log(`To sign in, open this address in your browser:\n\n    ${url.href}\n`);
    });
  const state = randomBytes(16).toString('base64url');
  const callback = await listenForCallback(options.callbackPort ?? 0, state);
  const provider = new InMemoryOAuthClientProvider(
    callback.redirectUrl,
    open,
    state,
    undefined,
    options.clientMetadataUrl,
  );
  const serverUrl = new URL(options.serverUrl);
  try {
    const client = new Client({ name: 'gatehouse-example-client', version: '1.0.0' });
    let transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    try {
      await client.connect(transport);
    } catch (error) {
      // 401: the SDK discovered Gatehouse, registered (or took the document's URL as its client_id),
      // and handed the authorization URL to `open`.
      if (!(error instanceof UnauthorizedError)) throw error;
      const code = await callback.code;
      transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
      await transport.finishAuth(code);
      await client.connect(transport);
    }
    try {
      return (await client.callTool({ name: options.tool ?? 'whoami', arguments: {} })) as CallToolResult;
    } finally {
      await client.close();
    }
  } finally {
    callback.close();
  }
}

/**
 * `node dist/examples/mcp-client.js [SERVER_URL] [--tool NAME] [--callback-port PORT]
 *  [--client-metadata-url URL [--print-client-metadata]]`
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      tool: { type: 'string' },
      'callback-port': { type: 'string' },
      'client-metadata-url': { type: 'string' },
      'print-client-metadata': { type: 'boolean' },
    },
  });
  const env = process.env;
  const clientMetadataUrl = values['client-metadata-url'] ?? (env.CLIENT_METADATA_URL || undefined);
  // The draft's rule (§3), which the SDK checks too: an https URL with a path.
  if (clientMetadataUrl !== undefined && !isHttpsUrl(clientMetadataUrl)) {
    throw new Error('--client-metadata-url must be an https URL with a path');
  }
  if (values['print-client-metadata'] === true) {
    if (clientMetadataUrl === undefined)
      throw new Error('--print-client-metadata needs --client-metadata-url');
    console.log(JSON.stringify(clientMetadataDocument(clientMetadataUrl), null, 2));
    return;
  }
  const serverUrl = positionals[0] ?? env.MCP_SERVER_URL ?? 'http://127.0.0.1:3001/mcp';
  const tool = values.tool ?? 'whoami';
  const callbackPort = Number(values['callback-port'] ?? env.CALLBACK_PORT ?? 0);
  if (!Number.isInteger(callbackPort) || callbackPort < 0 || callbackPort > 65535) {
    throw new Error('--callback-port must be a port number (0 for any free port)');
  }
  const result = await callToolSignedIn({ serverUrl, tool, callbackPort, clientMetadataUrl });
  const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
  if (result.isError === true) {
    console.error(`${tool} failed: ${text}`);
    process.exitCode = 1;
    return;
  }
  console.log(`${tool} answered: ${text}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
