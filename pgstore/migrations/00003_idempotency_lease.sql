-- A reservation of an idempotency key is named by a lease token, so that
-- only the request holding the key can store its answer or release it:
-- after a takeover, the request whose lease lapsed finds another token.
-- Rows reserved before this migration have no token and are completed by
-- no one; they are taken over when their lease lapses, as before.

-- +goose Up
ALTER TABLE vouch_idempotency ADD COLUMN lease text;

-- +goose Down
ALTER TABLE vouch_idempotency DROP COLUMN lease;
