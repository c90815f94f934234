// GET /: what each chat received, server-rendered so the page needs no script or external asset.
import type { ReceivedMessage } from './platform-types.js';
import type { SandboxState } from './state.js';

const CHATS_SHOWN = 200;
const MESSAGES_SHOWN = 10;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);

function describe(m: ReceivedMessage): string {
  const body = m.part.type === 'text' ? m.part.text : `[media ${m.part.mediaRef}]${m.part.caption ? ` ${m.part.caption}` : ''}`;
  const short = body.length > 120 ? `${body.slice(0, 119)}…` : body;
  return `<li><span class="t">${time(m.receivedAt)}</span> ${m.partIndex + 1}/${m.partCount} ${escapeHtml(short)}</li>`;
}

export function renderPage(state: SandboxState): string {
  const stats = state.stats();
  const cfg = state.config();
  const perAccount = new Map(stats.accounts.map((a) => [a.account, a]));
  const rejected = Object.entries(stats.rejected)
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ');

  const sections = state.accountViews().map((a) => {
    const chats = state.chatViews(a.account);
    const rows = chats.slice(0, CHATS_SHOWN).map((c) => {
      const last = state.messages({ account: a.account, chat: c.chatId }).slice(-MESSAGES_SHOWN);
      const flags = [c.error, c.failNext ? `failNext ${c.failNext}` : '', c.slowModeSeconds ? `slow ${c.slowModeSeconds}s` : ''].filter(Boolean).join(', ');
      return `<tr><td>${escapeHtml(c.chatId)}<div class="f">${escapeHtml(flags)}</div></td><td>${c.received}</td><td><ol>${last.map(describe).join('')}</ol></td></tr>`;
    });
    const more = chats.length > CHATS_SHOWN ? `<p>… and ${chats.length - CHATS_SHOWN} more chats</p>` : '';
    const pace = a.maxPerMinute > 0 ? `${a.maxPerMinute}/min, burst ${a.burst}` : 'unlimited';
    const status = a.unauthorized ? ' <b>unauthorized</b>' : a.blockedUntil !== null ? ` blocked until ${time(a.blockedUntil)}` : '';
    return `<section><h2>${escapeHtml(a.account)}${status}</h2>
<p>pace ${pace} · accepted ${a.accepted} · most in 1 s ${perAccount.get(a.account)?.maxPerSecond ?? 0}</p>
<table><tr><th>chat</th><th>received</th><th>last ${MESSAGES_SHOWN} parts</th></tr>${rows.join('')}</table>${more}</section>`;
  });

  return `<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2"><title>Metronome sandbox</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
ol{margin:0;padding-left:1.2em}.t{color:#888;font-family:monospace}.f{color:#b00;font-size:12px}
</style></head><body>
<h1>Metronome sandbox</h1>
<p>accepted ${stats.accepted} · rejected: ${rejected} · duplicate keys ${stats.duplicateKeys}</p>
<p>defaults: latency ${cfg.latencyMs} ms · pace ${cfg.maxPerMinute || 'unlimited'}/min burst ${cfg.burst} · slow mode ${cfg.slowModeSeconds} s · fault rate ${cfg.faultRate}</p>
${sections.join('\n') || '<p>Nothing received yet.</p>'}
</body></html>`;
}
