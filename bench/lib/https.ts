import { request } from 'node:https';

export interface HttpsResponse {
  status: number;
  body: string;
}

/** One HTTPS request on a fresh connection, trusting only the given certificate. */
export function httpsRequest(
  url: string,
  options: { ca: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        ca: options.ca,
        servername: 'localhost',
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
