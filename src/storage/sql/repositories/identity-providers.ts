import type { Kysely } from 'kysely';
import type {
  FederatedLink,
  IdentityProvider,
  UpstreamClaimMapping,
  UpstreamClientAuth,
} from '../../../core/model.js';
import type { FederatedLinkStore, IdentityProviderStore } from '../../../core/ports.js';
import type { Database, FederatedLinksTable, IdentityProvidersTable } from '../schema.js';
import { isLookupKey } from './lookup-key.js';

const providerFromRow = (row: IdentityProvidersTable): IdentityProvider => ({
  id: row.id,
  name: row.name,
  kind: row.kind as IdentityProvider['kind'],
  issuer: row.issuer,
  authorizationEndpoint: row.authorization_endpoint,
  tokenEndpoint: row.token_endpoint,
  userinfoEndpoint: row.userinfo_endpoint,
  clientId: row.client_id,
  clientAuth: row.client_auth as UpstreamClientAuth,
  clientSecretSealed: row.client_secret_sealed,
  privateKeySealed: row.private_key_sealed,
  publicJwk: row.public_jwk === null ? null : (JSON.parse(row.public_jwk) as Record<string, unknown>),
  scopes: JSON.parse(row.scopes) as string[],
  claimMapping: JSON.parse(row.claim_mapping) as UpstreamClaimMapping,
  linkByVerifiedEmail: Number(row.link_by_verified_email) === 1,
  trustUpstreamAssurance: Number(row.trust_upstream_assurance) === 1,
  requiredAcr: row.required_acr,
  logoUri: row.logo_uri,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

const providerRow = (provider: IdentityProvider): IdentityProvidersTable => ({
  id: provider.id,
  name: provider.name,
  kind: provider.kind,
  issuer: provider.issuer,
  authorization_endpoint: provider.authorizationEndpoint,
  token_endpoint: provider.tokenEndpoint,
  userinfo_endpoint: provider.userinfoEndpoint,
  client_id: provider.clientId,
  client_auth: provider.clientAuth,
  client_secret_sealed: provider.clientSecretSealed,
  private_key_sealed: provider.privateKeySealed,
  public_jwk: provider.publicJwk === null ? null : JSON.stringify(provider.publicJwk),
  scopes: JSON.stringify(provider.scopes),
  claim_mapping: JSON.stringify(provider.claimMapping),
  link_by_verified_email: provider.linkByVerifiedEmail ? 1 : 0,
  trust_upstream_assurance: provider.trustUpstreamAssurance ? 1 : 0,
  required_acr: provider.requiredAcr,
  logo_uri: provider.logoUri,
  created_at: provider.createdAt,
  updated_at: provider.updatedAt,
});

const linkFromRow = (row: FederatedLinksTable): FederatedLink => ({
  id: row.id,
  userId: row.user_id,
  providerId: row.provider_id,
  issuer: row.issuer,
  subject: row.subject,
  label: row.label,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

/** Upstream identity providers (migration 0022). */
export function createIdentityProviderRepository(db: Kysely<Database>): IdentityProviderStore {
  return {
    async insert(provider) {
      const result = await db
        .insertInto('identity_providers')
        .values(providerRow(provider))
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async get(id) {
      if (!isLookupKey(id)) return undefined;
      const row = await db
        .selectFrom('identity_providers')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row && providerFromRow(row);
    },
    async list(limit, offset) {
      const [rows, count] = await Promise.all([
        db
          .selectFrom('identity_providers')
          .selectAll()
          .orderBy('name')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        db
          .selectFrom('identity_providers')
          .select((eb) => eb.fn.countAll<number | string>().as('total'))
          .executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(providerFromRow), total: Number(count.total) };
    },
    async update(provider) {
      // Everything but the id and the creation time, which never change.
      const row: Partial<IdentityProvidersTable> = providerRow(provider);
      delete row.id;
      delete row.created_at;
      const result = await db
        .updateTable('identity_providers')
        .set(row)
        .where('id', '=', provider.id)
        .executeTakeFirst();
      return (result.numUpdatedRows ?? 0n) > 0n;
    },
    async delete(id) {
      if (!isLookupKey(id)) return false;
      // The links go by the foreign key's cascade, in the same statement.
      const result = await db.deleteFrom('identity_providers').where('id', '=', id).executeTakeFirst();
      return (result.numDeletedRows ?? 0n) > 0n;
    },
  };
}

/** Links of users to upstream people (migration 0022): one per (issuer, subject), by the unique index. */
export function createFederatedLinkRepository(db: Kysely<Database>): FederatedLinkStore {
  return {
    async insert(link) {
      const result = await db
        .insertInto('federated_links')
        .values({
          id: link.id,
          user_id: link.userId,
          provider_id: link.providerId,
          issuer: link.issuer,
          subject: link.subject,
          label: link.label,
          created_at: link.createdAt,
          last_used_at: link.lastUsedAt,
        })
        .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async find(issuer, subject) {
      if (!isLookupKey(issuer) || !isLookupKey(subject)) return undefined;
      const row = await db
        .selectFrom('federated_links')
        .selectAll()
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return row && linkFromRow(row);
    },
    async listByUser(userId) {
      if (!isLookupKey(userId)) return [];
      const rows = await db
        .selectFrom('federated_links')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(linkFromRow);
    },
    async countByProvider(providerId) {
      const row = await db
        .selectFrom('federated_links')
        .select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where('provider_id', '=', providerId)
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },
    async recordUse(id, at) {
      await db.updateTable('federated_links').set({ last_used_at: at }).where('id', '=', id).execute();
    },
    async delete(userId, id) {
      if (!isLookupKey(userId) || !isLookupKey(id)) return false;
      const result = await db
        .deleteFrom('federated_links')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return (result.numDeletedRows ?? 0n) > 0n;
    },
  };
}
