-- +goose Up
-- Uploaded media: the bytes live on disk, content-addressed by SHA-256 under
-- the data directory; a row gives one account the right to use them. The
-- same file uploaded twice by one account is one row (one mediaId).
CREATE TABLE media (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    sha256     TEXT NOT NULL,
    mime       TEXT NOT NULL,
    size       BIGINT NOT NULL CHECK (size > 0),
    kind       TEXT NOT NULL CHECK (kind IN ('image', 'video', 'document')),
    created_at BIGINT NOT NULL,
    UNIQUE (account_id, sha256)
);

-- WhatsApp message templates. A template is named by (name, language) within
-- its account; parameters is a JSON array of labels, one per placeholder.
CREATE TABLE templates (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name       TEXT NOT NULL,
    language   TEXT NOT NULL,
    category   TEXT NOT NULL CHECK (category IN ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
    status     TEXT NOT NULL,
    body       TEXT NOT NULL,
    parameters TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, name, language)
);

-- +goose Down
DROP TABLE templates;
DROP TABLE media;
