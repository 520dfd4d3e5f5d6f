-- +goose Up
-- Logins of the Twilio-compatible API: account SIDs (AC…, with their auth
-- token) and API keys (SK…, with their secret, acting for the AC… in
-- parent). A SID is unique across accounts because a request names nothing
-- else. The secret is kept as given, not hashed: callbacks are signed with
-- an account SID's token, as Twilio signs them.
CREATE TABLE twilio_credentials (
    sid        TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('account', 'key')),
    account_id TEXT NOT NULL REFERENCES accounts(id),
    env        TEXT NOT NULL CHECK (env IN ('test', 'live')),
    secret     TEXT NOT NULL,
    parent     TEXT NOT NULL DEFAULT '',
    name       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX twilio_credentials_account ON twilio_credentials (account_id, created_at);

-- What the Twilio-compatible API keeps of an account's numbers: where
-- replies to each are posted (its SmsUrl). A number with no row has none.
CREATE TABLE twilio_numbers (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    phone      TEXT NOT NULL,
    sms_url    TEXT NOT NULL DEFAULT '',
    sms_method TEXT NOT NULL DEFAULT 'POST',
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, phone)
);

-- +goose Down
DROP TABLE twilio_numbers;
DROP TABLE twilio_credentials;
