-- WhatsApp: the linked-device auth state of each paired account, and account status events.

-- A Baileys auth state, sealed at rest with SECRETS_KEY (AES-256-GCM, libs/core secrets): the
-- credentials are one row (kind 'creds', key_id ''), every Signal key one row (kind = its
-- type: 'pre-key', 'session', 'sender-key', …; key_id = its id). Kept here and not in files so
-- that any sender replica can hold the account's socket: replicas stay stateless.
create table whatsapp_auth (
  account_id uuid not null references accounts(id) on delete cascade,
  kind text not null,
  key_id text not null,
  -- seal(BufferJSON text); never readable without the key
  sealed bytea not null,
  updated_at timestamptz not null default now(),
  primary key (account_id, kind, key_id)
);

-- Account status changes (pairing → active, active → disconnected, …) reach /v1/events
-- through the channel run events already use; `type` tells them apart from run notices.
create function accounts_status_event() returns trigger language plpgsql as $$
begin
  perform pg_notify('metronome_run_events', json_build_object(
    'type', 'account', 'accountId', new.id, 'tenantId', new.tenant_id, 'status', new.status)::text);
  return null;
end $$;

create trigger accounts_status_event after update of status on accounts
  for each row when (new.status is distinct from old.status)
  execute function accounts_status_event();
