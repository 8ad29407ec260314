-- The transparency log of the receipts (see receipt.LogReader): the
-- stored hashes of golang.org/x/mod/sumdb/tlog by their stored hash index,
-- and one head row holding the number of leaves. log_index is a receipt's
-- leaf; NULL for receipts stored before the log existed.
--
-- vouch_receipt_append inserts a receipt and appends it to the log in one
-- statement, so in one transaction and one round trip: it locks the head
-- row (SELECT ... FOR UPDATE), so the appends of every server on the
-- database form one log, and a receipt is committed if and only if it is
-- a leaf. It computes what tlog.StoredHashes does: the leaf hash
-- SHA-256(0x00 || data) at StoredHashIndex(0, n), then, for each level i
-- below the number of trailing one bits of n, the interior hash
-- SHA-256(0x01 || left || right) with left the stored hash at
-- StoredHashIndex(i, (n >> i) - 1). The package's tests check the stored
-- hashes against tlog's. It returns the leaf index, or -1 when the id is
-- already stored (and then appends nothing).

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

-- +goose StatementBegin
CREATE FUNCTION vouch_stored_hash_index(level int, n bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
	i bigint := 0;
BEGIN
	FOR l IN 1..level LOOP
		n := 2 * n + 1;
	END LOOP;
	WHILE n > 0 LOOP
		i := i + n;
		n := n >> 1;
	END LOOP;
	RETURN i + level;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION vouch_receipt_append(p_id text, p_data bytea, p_owner text, p_visibility text,
	p_counterparties text[], p_expires_at timestamptz) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n     bigint;
	h     bytea;
	first bigint;
	lvl   int := 0;
BEGIN
	SELECT size INTO n FROM vouch_receipt_log_head FOR UPDATE;
	INSERT INTO vouch_receipts (id, data, owner, visibility, counterparties, expires_at, log_index)
	VALUES (p_id, p_data, p_owner, p_visibility, p_counterparties, p_expires_at, n)
	ON CONFLICT (id) DO NOTHING;
	IF NOT FOUND THEN
		RETURN -1;
	END IF;
	first := vouch_stored_hash_index(0, n);
	h := sha256('\x00'::bytea || p_data);
	INSERT INTO vouch_receipt_log (idx, hash) VALUES (first, h);
	WHILE ((n + 1) >> lvl) & 1 = 0 LOOP
		h := sha256('\x01'::bytea ||
			(SELECT hash FROM vouch_receipt_log WHERE idx = vouch_stored_hash_index(lvl, (n >> lvl) - 1)) || h);
		IF h IS NULL THEN
			RAISE EXCEPTION 'vouch: stored hash of level % before leaf % is missing from the log', lvl, n;
		END IF;
		lvl := lvl + 1;
		INSERT INTO vouch_receipt_log (idx, hash) VALUES (first + lvl, h);
	END LOOP;
	UPDATE vouch_receipt_log_head SET size = n + 1;
	RETURN n;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION vouch_receipt_append;
DROP FUNCTION vouch_stored_hash_index;
ALTER TABLE vouch_receipts DROP COLUMN log_index;
DROP TABLE vouch_receipt_log;
DROP TABLE vouch_receipt_log_head;
