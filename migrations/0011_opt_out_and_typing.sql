-- Opt-out by reply and typing first (docs/CONTRACT.md §3, accounts: optOutKeywords, typing).
--
-- optOutKeywords: a WhatsApp chat that answers one of these words, and nothing else, joins the
-- account's suppression list (reason opt_out). Existing WhatsApp accounts get the default words
-- at once: an opt-out that went unheard is a reported number, and the words change nothing the
-- account sends. Other platforms read no replies: an empty list.
--
-- typing: {"charsPerSecond": N, "maxSeconds": N} or null. Null on existing accounts, which keep
-- sending exactly as before (new WhatsApp accounts get it from the API's default).
--
-- Adding columns with a constant default or none rewrites no row (PostgreSQL 11+); the update
-- touches WhatsApp accounts only. One transaction, under the migrator's lock.
alter table accounts
  add column opt_out_keywords text[] not null default '{}'
    check (cardinality(opt_out_keywords) <= 20),
  add column typing jsonb;

update accounts set opt_out_keywords = '{STOP,UNSUBSCRIBE}' where platform = 'whatsapp';
