-- +goose Up
-- A message sent through the Twilio-compatible API, or a reply to one of its
-- numbers, owes its client Twilio's form post where a native message owes a
-- JSON webhook. The row the events feed reads for a step or a reply keeps
-- that post's form parameters beside the feed's body, so one row serves the
-- feed and the callback: form is '' for a msgsvc webhook (or none), and the
-- webhook worker posts a row with a form as Twilio's signed callback.
ALTER TABLE webhook_events ADD COLUMN form TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE webhook_events DROP COLUMN form;
