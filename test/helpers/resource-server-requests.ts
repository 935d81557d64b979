import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { ResourceServerOptions } from 'gatehouse-oauth-resource-server';
import type { TestServer } from './server.js';

export interface PlainResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** A plain-HTTP request to a local service (the resource server under test). */
export function plainRequest(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = httpRequest(new URL(base + path), { method: options.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Library options pointing at a running test Gatehouse (its issuer name differs from its address). */
export function optionsFor(
  server: TestServer,
  extra: Partial<ResourceServerOptions> = {},
): ResourceServerOptions {
  return {
    issuer: 'https://gatehouse.test',
    jwksUri: `${server.http.baseUrl}/jwks`,
    ca: server.ca,
    realm: 'notes',
    jwksCooldownSeconds: 0,
    now: () => server.clock.now(),
    ...extra,
    ...(extra.introspection === undefined
      ? {}
      : { introspection: { endpoint: `${server.http.baseUrl}/introspect`, ...extra.introspection } }),
  };
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
