import type { Kysely } from 'kysely';
import type { MailLink, MailLinkPurpose } from '../../../core/model.js';
import type { MailLinkStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { isLookupKey } from './lookup-key.js';
import { mailLinkFromRow, mailLinkToRow } from './mappers.js';

/**
 * Single-use mail links (docs/decisions.md, decision 35). Consuming is one UPDATE whose WHERE holds
 * the link unused and unexpired: the row lock (PostgreSQL) or the single writer (SQLite) lets exactly
 * one of concurrent followers through. Expired rows are deleted by the purge (repositories/purge.ts).
 */
export function createMailLinkRepository(db: Kysely<Database>): MailLinkStore {
  return {
    async insert(link: MailLink) {
      await db.insertInto('mail_links').values(mailLinkToRow(link)).execute();
    },
    async get(hash: string) {
      if (!isLookupKey(hash)) return undefined;
      const row = await db.selectFrom('mail_links').selectAll().where('hash', '=', hash).executeTakeFirst();
      return row && mailLinkFromRow(row);
    },
    async consume(hash: string, purpose: MailLinkPurpose, at: number) {
      if (!isLookupKey(hash)) return undefined;
      const row = await db
        .updateTable('mail_links')
        .set({ used_at: at })
        .where('hash', '=', hash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', at)
        .returningAll()
        .executeTakeFirst();
      return row && mailLinkFromRow(row);
    },
  };
}
