-- WhatsApp names one person by two identities: a phone-number JID (`60123@s.whatsapp.net`,
-- what campaigns name) and a LID (`123@lid`, what WhatsApp increasingly shows instead). Baileys
-- learns which LID is which phone number (its `lid-mapping` keys); every pair it stores in the
-- account's auth state is copied here, in plain, so a suppression under one identity (an
-- opt-out, a refusal) also holds under the other, in SQL, whenever either was learnt first.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. A new table and two functions; no existing row is touched.

create table whatsapp_identities (
  account_id uuid not null references accounts (id) on delete cascade,
  lid text not null check (lid like '%@lid'),
  pn text not null check (pn like '%@s.whatsapp.net'),
  learnt_at timestamptz not null,
  primary key (account_id, lid)
);
create index whatsapp_identities_pn_idx on whatsapp_identities (account_id, pn);

-- The chat ids a campaign may name one user JID by (libs/transports whatsapp `spellings`):
-- a phone-number JID also as its digits and as `+digits`; a LID only as itself.
create function whatsapp_spellings(jid text) returns text[]
language sql immutable parallel safe as $$
  select case
    when jid like '%@s.whatsapp.net' then array[jid, split_part(jid, '@', 1), '+' || split_part(jid, '@', 1)]
    when jid like '%@lid' then array[jid]
    else array[]::text[]
  end
$$;

-- A chat id and every spelling of the same person under the other identity, as the account's
-- learnt pairs know it: `+60123`, `60123` or `60123@s.whatsapp.net` find the pair by its phone
-- number, `123@lid` by its LID (both indexed). Any other chat id (a group, another platform's
-- chat) is itself only.
create function whatsapp_identity_spellings(account uuid, chat text) returns setof text
language sql stable parallel safe as $$
  select chat
  union
  select unnest(whatsapp_spellings(i.pn) || whatsapp_spellings(i.lid))
    from whatsapp_identities i
   where i.account_id = account
     and (i.lid = chat
          or i.pn = case when chat ~ '^\+?[0-9]+$' then ltrim(chat, '+') || '@s.whatsapp.net'
                         when chat like '%@s.whatsapp.net' then chat end)
$$;
