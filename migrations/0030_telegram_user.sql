-- Telegram user accounts (docs/CONTRACT.md §3 "Accounts", docs/platforms.md "telegram_user"): an
-- account signed in through MTProto (GramJS), its session string sealed in `credentials`.
-- MTProto's random_id makes a repeated send a duplicate Telegram refuses, so every such account
-- settles a doubtful send by sending again (`platform_deduplicates`, set by the API).
alter table accounts drop constraint accounts_platform_check;
alter table accounts add constraint accounts_platform_check check (platform in ('http', 'telegram', 'telegram_user', 'whatsapp'));
