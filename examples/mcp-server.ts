/**
 * An example MCP server (Model Context Protocol, Streamable HTTP transport) whose one tool, `whoami`,
 * is reached only with an access token from Gatehouse, through the resource-server library.
 *
 *   POST /mcp                                       JSON-RPC over Streamable HTTP; needs scope mcp:tools
 *   GET  /.well-known/oauth-protected-resource/mcp  RFC 9728 protected resource metadata (also at
 *                                                   /.well-known/oauth-protected-resource)
 *
 * An MCP client that knows only the server's URL is refused with 401 and
 * `WWW-Authenticate: Bearer resource_metadata="…"`; the metadata names Gatehouse as the authorization
 * server, so the client discovers it, registers itself (RFC 7591), and signs its user in with the code
 * flow, PKCE and `resource=<this server's URL>` (RFC 8707). The token it gets is addressed to this
 * server (`aud`), and a token for anything else is refused. See examples/README.md for a walk-through.
 *
 * A second tool, `sign_in_details`, needs a stronger or more recent sign-in than the others (the
 * `stepUp` option: a multi-factor or phishing-resistant one by default). Called with a token whose
 * sign-in falls short, the server answers 401 with RFC 9470's challenge,
 * `Bearer error="insufficient_user_authentication", acr_values="…", max_age=…`; the client sends its
 * user to Gatehouse again with those `acr_values` and `max_age`, and calls the tool with the new token.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  userAuthenticationProblem,
  type AuthenticationRequirements,
  type ResourceServerOptions,
  type VerifiedToken,
} from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';

/** The scope the tool needs; register it at Gatehouse and offer it on the resource. */
export const MCP_SCOPE = 'mcp:tools';

/** The tool that needs a step-up (RFC 9470). */
export const STEP_UP_TOOL = 'sign_in_details';

/**
 * What `sign_in_details` asks of the sign-in by default: Gatehouse's multi-factor `acr` or its
 * phishing-resistant one (a passkey), either will do (docs/decisions.md, decision 36).
 */
export const DEFAULT_STEP_UP: AuthenticationRequirements = {
  acr: ['urn:gatehouse:acr:multi-factor', 'phr'],
};

export interface McpExampleOptions {
  /** Gatehouse's issuer URL: tokens must carry it as `iss`, and the metadata names it. */
  issuer: string;
  /**
   * This server's MCP endpoint as clients address it, e.g. `https://mcp.example.com/mcp`: the resource
   * identifier clients ask Gatehouse for, and the `aud` every accepted token carries. Its path is where
   * the MCP endpoint is served.
   */
  resource: string;
  /** More resource-server options (a private CA for Gatehouse's certificate, a JWKS address, a clock). */
  resourceServer?: Partial<ResourceServerOptions>;
  /** What `sign_in_details` asks of the sign-in (RFC 9470: an `acr` of a list, a `maxAge`); DEFAULT_STEP_UP. */
  stepUp?: AuthenticationRequirements;
}

/** What `sign_in_details` answers: when and how the user signed in, as the token says. */
export interface SignInDetails {
  subject: string;
  acr: string;
  auth_time: number;
}

/** What `whoami` answers: who the token acts for, and what it allows. */
export interface WhoAmI {
  subject: string;
  client_id: string;
  scopes: string[];
  audience: string | string[];
  username?: string;
}

/** Builds the MCP server per request: stateless Streamable HTTP keeps no session between calls. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'gatehouse-example', version: '1.0.0' });
  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description: "The access token's subject, client and scopes, as the resource server verified them",
    },
    (extra) => {
      const token = extra.authInfo?.extra?.verified as VerifiedToken | undefined;
      if (token === undefined) {
        return { isError: true, content: [{ type: 'text', text: 'no verified token' }] };
      }
      const whoami: WhoAmI = {
        subject: token.subject,
        client_id: token.clientId,
        scopes: token.scopes,
        audience: token.claims.aud ?? [],
        ...(token.username === undefined ? {} : { username: token.username }),
      };
      return {
        content: [{ type: 'text', text: JSON.stringify(whoami) }],
        structuredContent: { ...whoami },
      };
    },
  );
  server.registerTool(
    STEP_UP_TOOL,
    {
      title: 'Sign-in details',
      description:
        'When and how the user signed in (acr, auth_time); needs a strong or recent sign-in (RFC 9470 step-up)',
    },
    (extra) => {
      // The HTTP handler let this call through only for a token that meets the step-up requirements.
      const token = extra.authInfo?.extra?.verified as VerifiedToken | undefined;
      const claims: Record<string, unknown> = token?.claims ?? {};
      const { acr, auth_time: authTime } = claims;
      if (token === undefined || typeof acr !== 'string' || typeof authTime !== 'number') {
        return { isError: true, content: [{ type: 'text', text: 'no sign-in in the token' }] };
      }
      const details: SignInDetails = { subject: token.subject, acr, auth_time: authTime };
      return {
        content: [{ type: 'text', text: JSON.stringify(details) }],
        structuredContent: { ...details },
      };
    },
  );
  return server;
}

/** Whether a JSON-RPC body (one message or a batch) calls `tool`. */
function callsTool(body: unknown, tool: string): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    if (typeof message !== 'object' || message === null) return false;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && params?.name === tool;
  });
}

export function createMcpExample(options: McpExampleOptions): { server: Server; close(): void } {
  const resource = new URL(options.resource);
  const tokens = expressResourceServer({
    issuer: options.issuer,
    realm: 'mcp',
    // RFC 9728: what the metadata says, and the audience every token must name (RFC 8707).
    resource: options.resource,
    scopesSupported: [MCP_SCOPE],
    // MCP sends JSON-RPC bodies: a token comes only in the Authorization header (RFC 6750 §2.1).
    bearerMethodsSupported: ['header'],
    resourceName: 'Gatehouse example MCP server',
    ...options.resourceServer,
  });
  // The SDK's Express app parses JSON bodies and refuses a Host header other than the resource's
  // host, which guards a server on a loopback address against DNS rebinding.
  const app = createMcpExpressApp({ host: resource.hostname, allowedHosts: [resource.hostname] });
  app.disable('x-powered-by');
  app.use(tokens.protectedResourceMetadata());

  const mcpPath = resource.pathname;
  const stepUp = options.stepUp ?? DEFAULT_STEP_UP;
  const now = options.resourceServer?.now ?? (() => Math.floor(Date.now() / 1000));
  app.post(mcpPath, tokens.requireToken([MCP_SCOPE]), async (req, res) => {
    const verified = res.locals.accessToken as VerifiedToken;
    // RFC 9470 §3: the step-up tool is one call inside the one endpoint, so its requirement is checked
    // here, on the call, before the transport: a sign-in that falls short gets the 401 challenge
    // that tells the client what to ask Gatehouse for (acr_values, max_age).
    if (callsTool(req.body, STEP_UP_TOOL)) {
      const problem = userAuthenticationProblem(verified.claims, stepUp, now());
      if (problem !== undefined) {
        const metadata = tokens.resourceServer.protectedResource?.metadataUrl;
        res
          .status(problem.status)
          .set('www-authenticate', problem.challenge(tokens.resourceServer.realm, metadata))
          .set('cache-control', 'no-store')
          .json({ error: problem.code, error_description: problem.description });
        return;
      }
    }
    // The SDK hands `req.auth` to tool handlers as `extra.authInfo`.
    const auth: AuthInfo = {
      token: verified.token,
      clientId: verified.clientId,
      scopes: verified.scopes,
      expiresAt: verified.claims.exp,
      resource,
      extra: { verified },
    };
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(Object.assign(req as IncomingMessage, { auth }), res, req.body);
  });
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE). Still behind the token,
  // so an unauthenticated client learns only where to get one.
  app.all(mcpPath, tokens.requireToken([MCP_SCOPE]), (_req, res) => {
    res
      .status(405)
      .set('allow', 'POST')
      .json({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed.' },
        id: null,
      });
  });

  const server = createServer(app);
  return {
    server,
    close() {
      tokens.close();
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * `node dist/examples/mcp-server.js --issuer https://localhost:8443`: the issuer from `--issuer` or
 * GATEHOUSE_ISSUER, the resource from `--resource` or MCP_RESOURCE (default
 * `http://127.0.0.1:<PORT>/mcp`), Gatehouse's development certificate from GATEHOUSE_CA_FILE.
 */
function main(): void {
  const { values } = parseArgs({
    options: { issuer: { type: 'string' }, resource: { type: 'string' }, port: { type: 'string' } },
  });
  const env = process.env;
  const issuer = values.issuer ?? env.GATEHOUSE_ISSUER ?? 'https://localhost:8443';
  const port = Number(values.port ?? env.PORT ?? 3001);
  const resource = values.resource ?? env.MCP_RESOURCE ?? `http://127.0.0.1:${port}/mcp`;
  const caFile = env.GATEHOUSE_CA_FILE;
  const { server } = createMcpExample({
    issuer,
    resource,
    resourceServer: caFile ? { ca: readFileSync(caFile, 'utf8') } : {},
  });
  server.listen(port, '127.0.0.1', () => {
    console.log(`MCP server at ${resource} (listening on 127.0.0.1:${port}), tokens from ${issuer}`);
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
