-- +goose Up
-- The platform's id of an inbound message (WhatsApp's wamid, ...), so that
-- a notification the platform delivers twice (it retries until it gets a
-- 200, and may repeat one anyway) is recorded, and sent to the integrator,
-- once. Empty for providers that give no id.
ALTER TABLE inbound_messages ADD COLUMN provider_ref TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX inbound_provider_ref ON inbound_messages (provider, provider_ref) WHERE provider_ref <> '';

-- +goose Down
DROP INDEX inbound_provider_ref;
ALTER TABLE inbound_messages DROP COLUMN provider_ref;
