-- Why a platform restricted an account (docs/CONTRACT.md §3, accounts, "Automatic cooling"):
-- `cooling` with reason `restricted` has no end; this says which restriction it is, so the run
-- it holds and the operator read what it is and what to do: `account_restricted` (WhatsApp's
-- 463, Telegram's PEER_FLOOD or USER_RESTRICTED), `account_spam_limited` (Telegram's
-- USER_BANNED_IN_CHANNEL in every group), `account_frozen` (Telegram froze the account).
-- Cleared when an operator lifts the restriction.
--
-- Safe when two services migrate at once (advisory lock, one transaction); a nullable column
-- without a default: no row is rewritten.
alter table accounts add column restricted_because text;
