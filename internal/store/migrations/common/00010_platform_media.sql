-- +goose Up
-- Files a messaging platform holds for us: an uploaded file (media, by its
-- SHA-256) goes to a platform once and is then sent by the platform's own
-- id. scope names whose copy it is (the provider and the sending account
-- on the platform, e.g. whatsapp/106540352242922), since a platform's ids
-- are valid only there. uploaded_at (Unix milliseconds) bounds the reuse:
-- platforms delete uploads after a while.
CREATE TABLE platform_media (
    scope       TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    platform_id TEXT NOT NULL,
    uploaded_at BIGINT NOT NULL,
    PRIMARY KEY (scope, sha256)
);

-- +goose Down
DROP TABLE platform_media;
