-- What the engines sharing this database learned about their sessions
-- (package reputation): for each session (0 for the panel's record), and
-- optionally an operation and a kind of claim ('' for every one), the
-- evidence that its votes were right and wrong, as float64 counts.

-- +goose Up
CREATE TABLE vouch_reputation (
	session   bigint NOT NULL CHECK (session >= 0),
	operation text   NOT NULL,
	kind      text   NOT NULL,
	right_n   double precision NOT NULL,
	wrong_n   double precision NOT NULL,
	PRIMARY KEY (session, operation, kind)
);

-- +goose Down
DROP TABLE vouch_reputation;
