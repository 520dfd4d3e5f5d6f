-- +goose Up
-- A sub-account's message is charged to every account above it too: upline
-- keeps what each of them was charged (JSON, parent first; '' at the top),
-- so that every refund reaches every level. bill_delivery fixes, when the
-- send is accepted, whether a failure after hand-over is refunded.
ALTER TABLE messages ADD COLUMN upline TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN bill_delivery INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE messages DROP COLUMN bill_delivery;
ALTER TABLE messages DROP COLUMN upline;
