-- A stored response's Content-Type that a text column cannot hold (bytes
-- that are not UTF-8, such as obs-text, or NUL) is kept in
-- content_type_bytes, with content_type NULL; any other stays in
-- content_type, as in the rows written before this migration.

-- +goose Up
ALTER TABLE vouch_idempotency ADD COLUMN content_type_bytes bytea;

-- +goose Down
ALTER TABLE vouch_idempotency DROP COLUMN content_type_bytes;
