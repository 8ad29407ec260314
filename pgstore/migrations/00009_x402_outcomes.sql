-- The outcomes of proofs spent on gated and "auth-capture" routes
-- (x402.OutcomeStore): under the proof's key in vouch_x402_replay, the
-- answer delivered, refused or held back for a pending capture, with its
-- settlement, as JSON, until the proof no longer matters.

-- +goose Up
CREATE TABLE vouch_x402_outcomes (
	key     text        PRIMARY KEY,
	outcome bytea       NOT NULL,
	until   timestamptz NOT NULL
);
CREATE INDEX vouch_x402_outcomes_until ON vouch_x402_outcomes (until);

-- +goose Down
DROP TABLE vouch_x402_outcomes;
