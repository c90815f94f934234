import type { Kysely } from 'kysely';
import type { DB, TelegramSignInState } from '../types.js';

export interface TelegramSignInRow {
  accountId: string;
  state: TelegramSignInState;
  phone: string;
  qr: { url: string; expiresAt: Date } | null;
  phoneCodeHash: string | null;
  session: Buffer | null;
  error: { code: string; field: string; message: string } | null;
  updatedAt: Date;
}

/** The steps of a Telegram user account's sign-in (migrations/0031). */
export class TelegramSignInRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async find(accountId: string): Promise<TelegramSignInRow | null> {
    const r = await this.db.selectFrom('telegram_sign_ins').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    if (!r) return null;
    return {
      accountId: r.account_id,
      state: r.state,
      phone: r.phone,
      qr: r.qr_url && r.qr_expires_at ? { url: r.qr_url, expiresAt: r.qr_expires_at } : null,
      phoneCodeHash: r.phone_code_hash,
      session: r.session,
      error: r.error_code ? { code: r.error_code, field: r.error_field ?? '', message: r.error_message ?? '' } : null,
      updatedAt: r.updated_at,
    };
  }

  async save(
    accountId: string,
    s: {
      state: TelegramSignInState;
      phone: string;
      qr?: TelegramSignInRow['qr'];
      phoneCodeHash: string | null;
      session: Buffer | null;
      error: TelegramSignInRow['error'];
    },
    now: Date,
  ): Promise<void> {
    const row = {
      state: s.state,
      phone: s.phone,
      qr_url: s.qr?.url ?? null,
      qr_expires_at: s.qr?.expiresAt ?? null,
      phone_code_hash: s.phoneCodeHash,
      session: s.session,
      error_code: s.error?.code ?? null,
      error_field: s.error?.field ?? null,
      error_message: s.error?.message ?? null,
      updated_at: now,
    };
    await this.db
      .insertInto('telegram_sign_ins')
      .values({ account_id: accountId, ...row })
      .onConflict((oc) => oc.column('account_id').doUpdateSet(row))
      .execute();
  }

  /**
   * The last step succeeded: in one transaction the session becomes the account's credentials and the
   * account `active`. False when another account has this Telegram user.
   */
  async finish(accountId: string, credentials: Buffer, externalId: string, now: Date): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const taken = await trx
        .selectFrom('accounts')
        .select('id')
        .where('platform', '=', 'telegram_user')
        .where('external_id', '=', externalId)
        .where('id', '<>', accountId)
        .executeTakeFirst();
      if (taken) return false;
      await trx.updateTable('accounts').set({ credentials, external_id: externalId, status: 'active', updated_at: now }).where('id', '=', accountId).execute();
      await trx.deleteFrom('telegram_sign_ins').where('account_id', '=', accountId).execute();
      return true;
    });
  }
}
