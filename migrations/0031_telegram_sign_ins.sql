-- A Telegram user account's sign-in in progress (docs/CONTRACT.md §3 "Telegram sign-in"): the
-- phone, Telegram's phone_code_hash and the not yet signed-in session (its auth key, sealed
-- with SECRETS_KEY) between the API's steps, which any replica may answer. Nothing of it is the
-- account's until the last step succeeds: then the session becomes the account's credentials
-- and this row goes. `error_*`: the last step's refusal, naming the field it was about.
create table telegram_sign_ins (
  account_id uuid primary key references accounts (id) on delete cascade,
  state text not null check (state in ('code_sent', 'qr_shown', 'password_needed', 'failed')),
  -- empty for a QR login until Telegram names the account
  phone text not null,
  -- the QR login's `tg://login?token=…` and when it stops working
  qr_url text,
  qr_expires_at timestamptz,
  phone_code_hash text,
  session bytea,
  error_code text,
  error_field text,
  error_message text,
  updated_at timestamptz not null
);
