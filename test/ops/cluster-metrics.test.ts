import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { spawnServer } from '../helpers/spawned-server.js';

/** One request on its own connection, so the cluster's round robin spreads them over the workers. */
function get(
  url: string,
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('metrics under serve --workers 2', () => {
  it('one scrape reports the sum over every worker', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-cluster-'));
    const server = await spawnServer({
      dataDir,
      workers: 2,
      env: { GATEHOUSE_METRICS_TOKEN: 'cluster-scrape' },
    });
    try {
      const n = 40;
      for (let i = 0; i < n; i++) assert.equal((await get(`${server.url}/healthz`, server.ca)).status, 200);
      const scrape = await get(`${server.url}/metrics`, server.ca, {
        authorization: 'Bearer cluster-scrape',
      });
      assert.equal(scrape.status, 200);
      const line = scrape.body
        .split('\n')
        .find((l) => l.startsWith('gatehouse_http_requests_total{') && l.includes('route="/healthz"'));
      assert.ok(line, 'a /healthz request counter');
      // Each worker saw only part of the 40; the sum is exact.
      assert.equal(Number(line.slice(line.lastIndexOf(' ') + 1)), n);
    } finally {
      const { code } = await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      assert.equal(code, 0);
    }
  });
});
