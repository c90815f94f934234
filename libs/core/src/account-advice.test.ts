import { accountAdvice } from './account-advice.js';

describe('accountAdvice', () => {
  test.each([
    ['whatsapp', 'disconnected', 'logged_out', 'WhatsApp account disconnected (logged_out): pair it again (POST /v1/accounts/A/pair), then resume.'],
    ['whatsapp', 'pairing', undefined, 'WhatsApp account is being paired: once the phone accepts, resume.'],
    [
      'telegram',
      'disconnected',
      'account_unauthorized',
      'Telegram bot disconnected (account_unauthorized): give it a valid bot token (PATCH /v1/accounts/A {"credentials":{"botToken":"…"}}), then resume.',
    ],
    ['http', 'disconnected', 'account_unauthorized', 'Account disconnected (account_unauthorized): reconnect it on its platform, then resume.'],
    ['telegram', 'disabled', undefined, 'Account is disabled: enable it (PATCH /v1/accounts/A {"status":"active"}), then resume.'],
    [
      'whatsapp',
      'cooling',
      undefined,
      'Account is cooling (too many flood waits or failed sends): it is active again when the cooling ends, or lift it now (POST /v1/accounts/A/cooling/lift); then resume.',
    ],
    [
      'whatsapp',
      'disconnected',
      'client_outdated',
      'WhatsApp refuses this client version (client_outdated): set WHATSAPP_VERSION to the current WhatsApp Web version (or WHATSAPP_FETCH_VERSION=true), restart the senders and the API, then resume. No new pairing is needed.',
    ],
    [
      'whatsapp',
      'cooling',
      'restricted',
      'WhatsApp restricted the account (a message refused with 463): do not send from it for now; check the number in the WhatsApp app on the phone, and once it may write again lift the restriction (POST /v1/accounts/A/cooling/lift); then resume. It never ends by itself.',
    ],
    [
      'telegram_user',
      'cooling',
      'restricted',
      'Telegram limited the account for spam (PEER_FLOOD): do not send from it for now; ask @SpamBot in the Telegram app when the limit ends, then lift the restriction (POST /v1/accounts/A/cooling/lift) and resume. It never ends by itself.',
    ],
    [
      'telegram_user',
      'disconnected',
      'session_revoked',
      'Telegram account signed out (session_revoked): sign in again (POST /v1/accounts/A/telegram-sign-in), then resume.',
    ],
  ])('%s %s %s', (platform, status, code, advice) => {
    expect(accountAdvice(platform, 'A', status, code)).toBe(advice);
  });
});
