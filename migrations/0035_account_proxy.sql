-- A proxy per account (docs/CONTRACT.md §3 "Accounts", docs/platforms.md "Proxy"): whatsapp and
-- telegram_user accounts may connect through a SOCKS5 proxy (telegram_user also an MTProxy).
-- `proxy`: the URL as given, sealed with SECRETS_KEY (it may hold a login), re-sealed by
-- `npm run reseal` like the credentials; `proxy_shown`: what the API shows of it (scheme, host,
-- port, whether it signs in; never the login); `proxy_failure`: why it refused or failed at the
-- last connection (naming host:port, never the login), cleared when a connection through it
-- opens or the proxy is changed. Columns only, nullable: no row is rewritten.
alter table accounts
  add column proxy bytea,
  add column proxy_shown jsonb,
  add column proxy_failure text,
  add column proxy_failed_at timestamptz;
