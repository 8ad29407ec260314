-- The x402 "payment-identifier" extension (x402.PaymentIDStore): each
-- payment id's first request (a digest of its method, path,
-- Idempotency-Key and payment), and once it charged, its response and
-- settlement as JSON, until the id no longer matters.

-- +goose Up
CREATE TABLE vouch_x402_payment_ids (
	id      text        PRIMARY KEY,
	request text        NOT NULL,
	record  bytea,
	until   timestamptz NOT NULL
);
CREATE INDEX vouch_x402_payment_ids_until ON vouch_x402_payment_ids (until);

-- +goose Down
DROP TABLE vouch_x402_payment_ids;
