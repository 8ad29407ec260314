-- The transparency log of the receipts (see receipt.LogReader): the
-- stored hashes of golang.org/x/mod/sumdb/tlog by their stored hash index,
-- and one head row holding the number of leaves. Appending a receipt locks
-- the head row (SELECT ... FOR UPDATE) in the transaction that inserts the
-- receipt, so the appends of every server on the database form one log.
-- log_index is the receipt's leaf; NULL for receipts stored before the log.

-- +goose Up
CREATE TABLE vouch_receipt_log_head (
	id   boolean PRIMARY KEY DEFAULT true CHECK (id),
	size bigint NOT NULL CHECK (size >= 0)
);
INSERT INTO vouch_receipt_log_head (size) VALUES (0);
CREATE TABLE vouch_receipt_log (
	idx  bigint PRIMARY KEY,
	hash bytea NOT NULL CHECK (length(hash) = 32)
);
ALTER TABLE vouch_receipts ADD COLUMN log_index bigint;

-- +goose Down
ALTER TABLE vouch_receipts DROP COLUMN log_index;
DROP TABLE vouch_receipt_log;
DROP TABLE vouch_receipt_log_head;
