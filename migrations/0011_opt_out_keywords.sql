-- Opt-out by reply (docs/CONTRACT.md §3, accounts: optOutKeywords): a WhatsApp chat that answers
-- one of these words, and nothing else, joins the account's suppression list (reason opt_out).
--
-- Existing WhatsApp accounts get the default words at once: an opt-out that went unheard is a
-- reported number, and the words change nothing the account sends. Other platforms read no
-- replies: an empty list. Adding a column with a constant default rewrites no row (PostgreSQL
-- 11+); the update touches WhatsApp accounts only. One transaction, under the migrator's lock.
alter table accounts
  add column opt_out_keywords text[] not null default '{}'
    check (cardinality(opt_out_keywords) <= 20);

update accounts set opt_out_keywords = '{STOP,UNSUBSCRIBE}' where platform = 'whatsapp';
