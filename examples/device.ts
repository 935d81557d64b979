/**
 * An example device: a command-line program that signs its user in with Gatehouse through the device
 * authorization grant (RFC 8628), the way a TV, a printer or a CLI without a browser does.
 *
 *   node dist/examples/device.js https://localhost:8443 <client_id> [<client_secret>]
 *
 * It asks POST /device_authorization for a device code and a user code, prints the code and where to
 * enter it, polls the token endpoint at the interval it was given (five seconds more after each
 * slow_down, RFC 8628 §3.5) until the user has allowed or denied it on another device, then prints who
 * signed in: the user GET /v1/users/me names (scope profile). Plain fetch, no dependencies; a
 * development certificate is trusted with NODE_EXTRA_CA_CERTS=./data/tls/cert.pem.
 */
import { pathToFileURL } from 'node:url';

export interface DeviceSignInOptions {
  /** Gatehouse's issuer: its metadata at `<issuer>/.well-known/oauth-authorization-server`. */
  issuer: string;
  clientId: string;
  /** For a confidential client; a device is usually a public one (none). */
  clientSecret?: string;
  /** Default "openid profile": an ID token, and the user's name from /v1/users/me. */
  scope?: string;
  /** Shows the user what to do; printed to stdout by default. */
  prompt?: (instructions: DeviceInstructions) => void;
  /** Waits between polls; a timer by default (tests pass their own). */
  wait?: (seconds: number) => Promise<void>;
  /** A fetch that trusts a private CA, for tests; outside them NODE_EXTRA_CA_CERTS does that. */
  fetch?: (
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string },
  ) => Promise<Response>;
}

export interface DeviceInstructions {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | undefined;
  expiresIn: number;
}

export interface DeviceSignIn {
  /** The user as /v1/users/me describes them. */
  user: { id: string; username: string; name?: string | null };
  /** The token response (RFC 6749 §5.1): access_token, and id_token and refresh_token as granted. */
  tokens: Record<string, unknown>;
}

/** The user denied the request, or it expired before they answered: there is nothing to retry. */
export class DeviceSignInError extends Error {
  constructor(
    readonly error: string,
    description: string | undefined,
  ) {
    super(`${error}${description ? `: ${description}` : ''}`);
    this.name = 'DeviceSignInError';
  }
}

export async function signInWithDevice(options: DeviceSignInOptions): Promise<DeviceSignIn> {
  const request = options.fetch ?? ((url, init) => fetch(url, init));
  const wait =
    options.wait ?? ((seconds) => new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000)));
  const prompt = options.prompt ?? printInstructions;
  // Client authentication as at the token endpoint: HTTP Basic with a secret, client_id alone without.
  const credentials: Record<string, string> = {};
  const form: Record<string, string> = {};
  if (options.clientSecret === undefined) form.client_id = options.clientId;
  else {
    const encode = (part: string) => encodeURIComponent(part).replace(/%20/g, '+');
    credentials.authorization = `Basic ${Buffer.from(`${encode(options.clientId)}:${encode(options.clientSecret)}`).toString('base64')}`;
  }
  const post = async (url: string, params: Record<string, string>) => {
    const response = await request(url, {
      method: 'POST',
      headers: {
        ...credentials,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({ ...form, ...params }).toString(),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  // RFC 8414: where the endpoints are.
  const discovery = await request(`${options.issuer}/.well-known/oauth-authorization-server`, {});
  if (!discovery.ok)
    throw new Error(`no authorization server metadata at ${options.issuer} (${discovery.status})`);
  const metadata = (await discovery.json()) as Record<string, string>;
  const deviceEndpoint = metadata.device_authorization_endpoint;
  const tokenEndpoint = metadata.token_endpoint;
  if (deviceEndpoint === undefined || tokenEndpoint === undefined) {
    throw new Error('the server does not offer the device authorization grant');
  }

  // RFC 8628 §3.1-§3.2: the codes.
  const started = await post(deviceEndpoint, { scope: options.scope ?? 'openid profile' });
  if (started.status !== 200) {
    throw new DeviceSignInError(
      String(started.body.error),
      started.body.error_description as string | undefined,
    );
  }
  const deviceCode = String(started.body.device_code);
  prompt({
    userCode: String(started.body.user_code),
    verificationUri: String(started.body.verification_uri),
    verificationUriComplete: started.body.verification_uri_complete as string | undefined,
    expiresIn: Number(started.body.expires_in),
  });

  // RFC 8628 §3.4-§3.5: poll until the user has decided.
  let interval = Number(started.body.interval ?? 5);
  for (;;) {
    await wait(interval);
    const answer = await post(tokenEndpoint, {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: deviceCode,
    });
    if (answer.status === 200) {
      const me = await request(`${options.issuer}/v1/users/me`, {
        headers: { authorization: `Bearer ${String(answer.body.access_token)}`, accept: 'application/json' },
      });
      if (!me.ok) throw new Error(`GET /v1/users/me answered ${me.status} (was scope profile granted?)`);
      return { user: (await me.json()) as DeviceSignIn['user'], tokens: answer.body };
    }
    const error = String(answer.body.error);
    if (error === 'authorization_pending') continue;
    if (error === 'slow_down') {
      interval += 5;
      continue;
    }
    throw new DeviceSignInError(error, answer.body.error_description as string | undefined);
  }
}

function printInstructions(instructions: DeviceInstructions): void {
  process.stdout.write(
    `To sign in, open ${instructions.verificationUri} on your phone or computer and enter the code\n\n` +
      `    ${instructions.userCode}\n\n` +
      (instructions.verificationUriComplete ? `(or open ${instructions.verificationUriComplete})\n` : '') +
      `The code expires in ${Math.round(instructions.expiresIn / 60)} minutes. Waiting…\n`,
  );
}

/** `node dist/examples/device.js ISSUER CLIENT_ID [CLIENT_SECRET]`. */
async function main(): Promise<void> {
  const [issuer, clientId, clientSecret] = process.argv.slice(2);
  if (issuer === undefined || clientId === undefined) {
    process.stderr.write('usage: node dist/examples/device.js ISSUER CLIENT_ID [CLIENT_SECRET]\n');
    process.exit(2);
  }
  const { user, tokens } = await signInWithDevice({
    issuer: issuer.replace(/\/$/, ''),
    clientId,
    ...(clientSecret !== undefined ? { clientSecret } : {}),
  });
  process.stdout.write(
    `Signed in as ${user.name ?? user.username} (user name ${user.username}, id ${user.id}); ` +
      `granted: ${String(tokens.scope ?? '')}\n`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`device: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
