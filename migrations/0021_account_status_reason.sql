-- The `account.status` webhook says why an account is cooling (docs/CONTRACT.md §7): its data
-- gains `reason` (the cooling's: `flood_waits`, `failures`, `restricted`; null otherwise), and
-- it fires when the reason changes while the status stays `cooling` too, as when WhatsApp
-- restricts an account already cooling for its flood waits: an operator must hear of that.
--
-- Replaces the function and the trigger of 0008; no row is touched.
create or replace function webhook_account_status() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status
     or (new.status = 'cooling' and new.cooling_reason is distinct from old.cooling_reason) then
    insert into webhook_deliveries (webhook_id, tenant_id, type, subject_id, payload)
    select w.id, new.tenant_id, 'account.status', new.id,
           jsonb_build_object(
             'type', 'account.status',
             'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', jsonb_build_object(
               'accountId', new.id, 'platform', new.platform,
               'status', new.status,
               'previousStatus', case when tg_op = 'INSERT' then null else old.status end,
               'reason', case when new.status = 'cooling' then new.cooling_reason end))
      from webhooks w
     where w.tenant_id = new.tenant_id and w.active and 'account.status' = any(w.events);
  end if;
  return new;
end $$;

drop trigger webhook_account_status on accounts;
create trigger webhook_account_status after insert or update of status, cooling_reason on accounts
  for each row execute function webhook_account_status();
