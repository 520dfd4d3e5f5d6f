-- +goose Up
-- A one-recipient send writes no campaigns row: its campaign is named
-- after its message and read from it. messages.campaign_id therefore no
-- longer always names a row, and its REFERENCES clause goes.
--
-- SQLite cannot drop a constraint with ALTER TABLE; its documented way to
-- drop a FOREIGN KEY without rebuilding the table (and copying every
-- message) is to edit the table's stored definition, which describes the
-- same rows without the clause.
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, ' REFERENCES campaigns(id)', '')
    WHERE type = 'table' AND name = 'messages';
-- RESET turns writing off again and makes this connection read the edited
-- definition.
PRAGMA writable_schema = RESET;
-- Each schema change counts up schema_version, which makes every other
-- open connection read the schema again too (SQL cannot set it to the old
-- value plus one, as the documented procedure does).
CREATE TABLE schema_version_bump (x INTEGER);
DROP TABLE schema_version_bump;

-- +goose Down
-- Not restored: the messages of one-recipient sends written since name
-- campaigns that have no row.
SELECT 1;
