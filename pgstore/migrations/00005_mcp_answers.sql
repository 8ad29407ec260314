-- The tool results that settled MCP payments bought, so that a retry of
-- the same paid call gets its result again from any server on the
-- database. key is the payment's key in vouch_x402_replay, answer the
-- result as JSON, until the end of the payment's validity.

-- +goose Up
CREATE TABLE vouch_mcp_answers (
	key    text PRIMARY KEY,
	answer bytea NOT NULL,
	until  timestamptz NOT NULL
);
CREATE INDEX vouch_mcp_answers_until ON vouch_mcp_answers (until);

-- +goose Down
DROP TABLE vouch_mcp_answers;
