-- A payment authorization remembers whether it was settled, so that the
-- answer it bought can be delivered again when it was lost on the way.
-- Both columns stay NULL until the payment is settled: request is the
-- digest of the paid request, settlement the facilitator's answer as JSON.

-- +goose Up
ALTER TABLE vouch_x402_replay ADD COLUMN request text, ADD COLUMN settlement bytea;

-- +goose Down
ALTER TABLE vouch_x402_replay DROP COLUMN settlement, DROP COLUMN request;
