-- The first schema of vouch's shared state. Every instant is a timestamptz
-- (microseconds); every table has an index on the column its sweep reads.

-- +goose Up
CREATE TABLE vouch_receipts (
	id             text PRIMARY KEY,
	data           bytea NOT NULL,        -- the receipt exactly as signed
	owner          text NOT NULL,
	visibility     text NOT NULL,
	counterparties text[] NOT NULL DEFAULT '{}',
	expires_at     timestamptz NOT NULL
);
CREATE INDEX vouch_receipts_expires_at ON vouch_receipts (expires_at);

CREATE TABLE vouch_idempotency (
	key          text PRIMARY KEY,        -- already scoped to the caller
	fingerprint  text NOT NULL,
	lease_until  timestamptz NOT NULL,    -- an unfinished reservation may be taken over from then on
	expires_at   timestamptz NOT NULL,    -- a stored response is forgotten from then on
	status       integer,                 -- NULL while the request runs
	content_type text,
	body         bytea
);
CREATE INDEX vouch_idempotency_expires_at ON vouch_idempotency (expires_at);

CREATE TABLE vouch_trial_limits (
	caller  text PRIMARY KEY,
	tat     timestamptz NOT NULL,         -- GCRA theoretical arrival time
	allowed boolean NOT NULL              -- the decision of the last request
);
CREATE INDEX vouch_trial_limits_tat ON vouch_trial_limits (tat);

CREATE TABLE vouch_x402_replay (
	key   text PRIMARY KEY,
	until timestamptz NOT NULL
);
CREATE INDEX vouch_x402_replay_until ON vouch_x402_replay (until);

-- +goose Down
DROP TABLE vouch_x402_replay;
DROP TABLE vouch_trial_limits;
DROP TABLE vouch_idempotency;
DROP TABLE vouch_receipts;
