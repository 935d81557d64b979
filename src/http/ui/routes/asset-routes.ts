import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export interface StaticAsset {
  path: string;
  contentType: string;
  body: string;
}

/**
 * Serves the pages' own CSS and scripts from the package: no CDN, works offline. No format suffix in
 * the paths (no format suffix on any path, docs/api.md); the content type says what each is, and nosniff makes browsers trust it.
 */
export function registerAssetRoutes(app: FastifyInstance, assets: readonly StaticAsset[]): void {
  for (const asset of assets) {
    const etag = `"${createHash('sha256').update(asset.body).digest('base64url').slice(0, 22)}"`;
    app.get(asset.path, async function staticAsset(request, reply) {
      reply.header('etag', etag).header('cache-control', 'public, max-age=300');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.header('content-type', asset.contentType).send(asset.body);
    });
  }
}
