-- +goose Up
-- What each message's hand-over cost the operator: the route taken, the
-- provider's cost in micro-units of its currency ('' when the provider has
-- no cost for the destination). Operators read margins from them; they are
-- never shown to integrators.
ALTER TABLE messages ADD COLUMN route TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN cost BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN cost_currency TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE messages DROP COLUMN cost_currency;
ALTER TABLE messages DROP COLUMN cost;
ALTER TABLE messages DROP COLUMN route;
