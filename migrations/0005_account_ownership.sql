-- One (platform, externalId) belongs to one account, and so to one tenant.
--
-- The HTTP platform knows an account only by its externalId. Two Metronome accounts with the
-- same one would both act as that platform account, whichever tenant created them: a tenant
-- could send as another tenant's account. From now on an externalId is registered once.
--
-- Rows that already clash: the oldest account keeps its externalId (it is the one the platform
-- account was registered for; a later one is the copy). Every later one is `disabled`, and its
-- externalId gets the suffix `~duplicate-<its id>`: `~` is a character the API never accepts in
-- an externalId, so nobody can register the renamed value, and the account, which can no
-- longer send as the original, keeps its runs and history. Its owner creates a new account
-- with the platform id that is really theirs. Each renamed row is reported with a NOTICE.
--
-- `http` accounts now carry an API key (`credentials: {apiKey}`), sent on every platform
-- request. Existing `http` accounts have none, so they are `disconnected` until their owner
-- gives one (PATCH /v1/accounts/{id} {"credentials": {"apiKey": "…"}}), which makes them
-- `active` again; their open runs are resumed as usual.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and
-- runs this in one transaction. The table lock keeps API writes from adding a clash between
-- the clean-up and the index; reads go on meanwhile.
lock table accounts in share row exclusive mode;

do $$
declare
  dup record;
begin
  for dup in
    select id, platform, external_id from (
      select id, platform, external_id,
             row_number() over (partition by platform, external_id order by created_at, id) as n
      from accounts
      where external_id is not null
    ) ranked
    where n > 1
  loop
    raise notice 'account % (%): externalId % already belongs to an older account; disabled and renamed', dup.id, dup.platform, dup.external_id;
    update accounts
       set external_id = external_id || '~duplicate-' || id::text, status = 'disabled', updated_at = now()
     where id = dup.id;
  end loop;
end
$$;

update accounts set status = 'disconnected', updated_at = now()
 where platform = 'http' and credentials is null and status = 'active';

create unique index accounts_platform_external_id_key on accounts (platform, external_id) where external_id is not null;
