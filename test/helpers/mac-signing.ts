import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { signMacRequest, type MacAlgorithmName } from 'gatehouse-oauth-resource-server/mac';

const run = promisify(execFile);

export interface MacSigning {
  token: string;
  key: string;
  method: string;
  /** Path and query as sent. */
  path: string;
  host: string;
  port: string;
  algorithm?: MacAlgorithmName;
  ext?: string;
}

/** draft-ietf-oauth-v2-http-mac-02 form: ts plus a random nonce. */
export function macHeaderDraft02(s: MacSigning, ts: number, nonce = randomBytes(8).toString('hex')): string {
  const mac = signMacRequest(
    { id: s.token, ts: String(ts), nonce, ext: s.ext, bodyhash: undefined },
    { method: s.method, uri: s.path, host: s.host, port: s.port },
    s.key,
    s.algorithm,
  );
  const ext = s.ext === undefined ? '' : `, ext="${s.ext}"`;
  return `MAC id="${s.token}", ts="${ts}", nonce="${nonce}"${ext}, mac="${mac}"`;
}

/** draft-ietf-oauth-v2-http-mac-01 form: nonce "<age>:<random>", optional bodyhash. */
export function macHeaderDraft01(s: MacSigning, age: number, bodyhash?: string): string {
  const nonce = `${age}:${randomBytes(8).toString('hex')}`;
  const mac = signMacRequest(
    { id: s.token, ts: undefined, nonce, ext: s.ext, bodyhash },
    { method: s.method, uri: s.path, host: s.host, port: s.port },
    s.key,
    s.algorithm,
  );
  const hash = bodyhash === undefined ? '' : `, bodyhash="${bodyhash}"`;
  return `MAC id="${s.token}", nonce="${nonce}"${hash}, mac="${mac}"`;
}

export const OAUTHLIB = '/usr/lib/python3/dist-packages/oauthlib';
export const PYTHON = '/usr/bin/python3';
export const oauthlibMissing =
  existsSync(OAUTHLIB) && existsSync(PYTHON)
    ? false
    : 'python3-oauthlib is not installed (apt-get install python3-oauthlib); oauthlib interop skipped';

const SCRIPT = `
import datetime, json, sys
from oauthlib.oauth2.rfc6749.tokens import prepare_mac_header
a = json.loads(sys.argv[1])
headers = prepare_mac_header(a['token'], a['uri'], a['key'], a['method'], body=a.get('body'),
    hash_algorithm=a['algorithm'], issue_time=datetime.datetime.fromtimestamp(a['iat']), draft=a['draft'])
print(headers['Authorization'])
`;

/** The Authorization header Python's oauthlib makes for a request (the system Python, Debian's oauthlib). */
export async function oauthlibMacHeader(input: {
  token: string;
  key: string;
  uri: string;
  method: string;
  algorithm: MacAlgorithmName;
  iat: number;
  draft: 0 | 1;
  body?: string;
}): Promise<string> {
  const { stdout } = await run(PYTHON, ['-c', SCRIPT, JSON.stringify(input)]);
  return stdout.trim();
}
