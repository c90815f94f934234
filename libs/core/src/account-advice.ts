/** What an operator does to bring an account back, by platform: the end of a paused run's summary. */
export function accountAdvice(platform: string, accountId: string, status: string, code?: string): string {
  const why = code ? ` (${code})` : '';
  if (status === 'cooling' && code === 'restricted' && platform === 'telegram_user')
    return `Telegram limited the account for spam (PEER_FLOOD): do not send from it for now; ask @SpamBot in the Telegram app when the limit ends, then lift the restriction (POST /v1/accounts/${accountId}/cooling/lift) and resume. It never ends by itself.`;
  if (status === 'cooling' && code === 'restricted')
    return `WhatsApp restricted the account (a message refused with 463): do not send from it for now; check the number in the WhatsApp app on the phone, and once it may write again lift the restriction (POST /v1/accounts/${accountId}/cooling/lift); then resume. It never ends by itself.`;
  if (status === 'cooling')
    return `Account is cooling (too many flood waits or failed sends): it is active again when the cooling ends, or lift it now (POST /v1/accounts/${accountId}/cooling/lift); then resume.`;
  if (status === 'disabled') return `Account is disabled: enable it (PATCH /v1/accounts/${accountId} {"status":"active"}), then resume.`;
  if (platform === 'whatsapp') {
    if (code === 'client_outdated')
      return `WhatsApp refuses this client version (client_outdated): set WHATSAPP_VERSION to the current WhatsApp Web version (or WHATSAPP_FETCH_VERSION=true), restart the senders and the API, then resume. No new pairing is needed.`;
    return status === 'pairing'
      ? `WhatsApp account is being paired: once the phone accepts, resume.`
      : `WhatsApp account disconnected${why}: pair it again (POST /v1/accounts/${accountId}/pair), then resume.`;
  }
  if (platform === 'telegram_user')
    return status === 'pairing'
      ? `Telegram account is signing in: once the code (and the two-step password) is accepted, resume.`
      : `Telegram account signed out${why}: sign in again (POST /v1/accounts/${accountId}/telegram-sign-in), then resume.`;
  if (platform === 'telegram')
    return `Telegram bot disconnected${why}: give it a valid bot token (PATCH /v1/accounts/${accountId} {"credentials":{"botToken":"…"}}), then resume.`;
  return `Account ${status}${why}: reconnect it on its platform, then resume.`;
}
