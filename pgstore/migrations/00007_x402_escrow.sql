-- The lifecycle of "auth-capture" payments (x402.EscrowLedger): each
-- payment's record, as JSON, under its id (its PaymentInfo hash), with
-- its state and the time of its hold beside it, so that the held ones
-- can be listed oldest first for recovery, the time until which a
-- server recovering it claimed it, and when it no longer matters (its
-- refund deadline; never without one).

-- +goose Up
CREATE TABLE vouch_x402_escrow (
	id      text        PRIMARY KEY,
	state   text        NOT NULL,
	held_at timestamptz NOT NULL,
	record  bytea       NOT NULL,
	claimed_until timestamptz,
	forget_at timestamptz NOT NULL
);
CREATE INDEX vouch_x402_escrow_forget ON vouch_x402_escrow (forget_at);
CREATE INDEX vouch_x402_escrow_held ON vouch_x402_escrow (held_at, id) WHERE state = 'held';

-- +goose Down
DROP TABLE vouch_x402_escrow;
