-- +goose Up
-- The simulator's carrier-side record of what it accepted, kept only when
-- MSGSVC_SIMULATOR_JOURNAL is on (tests of many nodes): one row per message
-- the simulated carrier took, the node that handed it over first, and how
-- many later hand-overs of the same message it deduplicated.
CREATE TABLE simulator_journal (
    message_id    TEXT PRIMARY KEY,
    node          TEXT NOT NULL,
    accepted_at   BIGINT NOT NULL,
    resubmissions INTEGER NOT NULL DEFAULT 0,
    last_node     TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE simulator_journal;
