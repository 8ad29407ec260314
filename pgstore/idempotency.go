package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/router"
)

// DefaultIdempotencyLease is how long a reservation of an idempotency key
// holds when [IdempotencyStore.Lease] is zero.
const DefaultIdempotencyLease = 5 * time.Minute

// IdempotencyStore is a [router.IdempotencyStore] in the table
// vouch_idempotency, shared by every server on the database: a key
// reserved on one server is in flight on all of them, and a response
// stored on one is replayed by all of them.
//
// Reserve is one INSERT … ON CONFLICT statement, so of two concurrent
// first requests with one key, on any servers, exactly one is told
// IdempotencyReserved; the others see IdempotencyInFlight with a nil Done
// channel, and the [router.Handler] polls until the response is stored.
// A key reused with another request is reported with the fingerprint of
// the request that holds it, which the Handler answers with 422.
//
// A server that dies while it runs a request cannot Release its key, so a
// reservation is a lease: from Lease after it was taken, another request
// with the key takes it over and runs. Lease must exceed the longest
// request the Handler serves.
//
// Each reservation carries a random lease token, returned in
// IdempotencyEntry.Lease. Complete and Release act only on a key still in
// flight under that token (a condition of their UPDATE and DELETE), so a
// request whose lease lapsed and was taken over can neither store its
// answer under the new holder's reservation nor release it; a stored
// response is never replaced before it expires.
//
// Under disconnects and retries: the Handler completes or releases a
// reservation on a context detached from the client's, so a client that
// goes away never leaves its key held; a retry that arrives while the
// first request runs polls, and then replays the stored answer. The table
// has no size bound, so no caller's keys displace another's: rows are
// bounded by the callers' request rates and the window, and swept. Rows of expired keys are
// removed by DeleteExpired (or [DB.Sweep]). The store is safe for
// concurrent use.
type IdempotencyStore struct {
	// Lease is how long a reservation holds before another request may
	// take the key over; zero means DefaultIdempotencyLease. Set it before
	// first use.
	Lease time.Duration

	db *DB
}

var _ router.IdempotencyStore = (*IdempotencyStore)(nil)

// Idempotency returns the idempotency store of db, with the default
// lease.
func (db *DB) Idempotency() *IdempotencyStore { return &IdempotencyStore{db: db} }

// reserveTries bounds the rounds of Reserve: a key released or expiring
// between its two statements sends it round again.
const reserveTries = 3

// Reserve implements [router.IdempotencyStore].
func (s *IdempotencyStore) Reserve(ctx context.Context, key, fingerprint string, now, expires time.Time) (router.IdempotencyEntry, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return router.IdempotencyEntry{}, err
	}
	defer cancel()
	lease := s.Lease
	if lease <= 0 {
		lease = DefaultIdempotencyLease
	}
	token := newLeaseToken()
	for range reserveTries {
		// Claim the key if it is free, expired, or held by a lapsed lease.
		// The conflict arbiter locks the row, so two claims never both win.
		tag, err := s.db.pool.Exec(ctx, `
			INSERT INTO vouch_idempotency AS i (key, fingerprint, lease_until, expires_at, lease)
			VALUES ($1, $2, $3, $4, $6)
			ON CONFLICT (key) DO UPDATE
			SET fingerprint = EXCLUDED.fingerprint, lease_until = EXCLUDED.lease_until,
			    expires_at = EXCLUDED.expires_at, lease = EXCLUDED.lease,
			    status = NULL, content_type = NULL, content_type_bytes = NULL, body = NULL
			WHERE (i.status IS NOT NULL AND i.expires_at <= $5)
			   OR (i.status IS NULL AND i.lease_until <= $5)`,
			textKey(key), fingerprint, now.Add(lease), expires, now, token)
		if err != nil {
			return router.IdempotencyEntry{}, fmt.Errorf("pgstore: reserving idempotency key: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return router.IdempotencyEntry{State: router.IdempotencyReserved, Lease: token}, nil
		}
		// Someone holds the key: read what they hold. The row is read
		// after the claim failed, so it is at least as new as the one
		// that made it fail.
		var (
			e          router.IdempotencyEntry
			leaseUntil time.Time
			expiresAt  time.Time
			status     *int32
			ctype      *string
			ctypeBytes []byte
			body       []byte
		)
		err = s.db.pool.QueryRow(ctx, `
			SELECT fingerprint, lease_until, expires_at, status, content_type, content_type_bytes, body
			FROM vouch_idempotency WHERE key = $1`, textKey(key)).
			Scan(&e.Fingerprint, &leaseUntil, &expiresAt, &status, &ctype, &ctypeBytes, &body)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // released meanwhile
		}
		if err != nil {
			return router.IdempotencyEntry{}, fmt.Errorf("pgstore: reading idempotency key: %w", err)
		}
		switch {
		case status != nil && now.Before(expiresAt):
			e.State = router.IdempotencyCompleted
			e.Response = &router.StoredResponse{Status: int(*status), Body: body}
			switch {
			case ctype != nil:
				e.Response.ContentType = *ctype
			case ctypeBytes != nil:
				e.Response.ContentType = string(ctypeBytes)
			}
			return e, nil
		case status == nil && now.Before(leaseUntil):
			e.State = router.IdempotencyInFlight
			return e, nil
		}
		// Expired or lapsed meanwhile: claim it in the next round.
	}
	// The key changes hands faster than we can read it; the Handler
	// polls and asks again.
	return router.IdempotencyEntry{State: router.IdempotencyInFlight, Fingerprint: fingerprint}, nil
}

// newLeaseToken returns a fresh, unguessable lease token.
func newLeaseToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

// Complete implements [router.IdempotencyStore]. It stores resp only if
// key is still in flight under lease: when the reservation lapsed and
// another request took the key over, that request's reservation and
// response stay.
func (s *IdempotencyStore) Complete(ctx context.Context, key, lease string, resp *router.StoredResponse, _ time.Time) error {
	if resp == nil {
		return errors.New("pgstore: completing idempotency key: nil response")
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	// A text column holds UTF-8 without NUL; any other Content-Type is
	// kept as bytes, so that it is replayed as it was stored.
	var ctype, ctypeBytes any = resp.ContentType, nil
	if !utf8.ValidString(resp.ContentType) || strings.ContainsRune(resp.ContentType, 0) {
		ctype, ctypeBytes = nil, []byte(resp.ContentType)
	}
	_, err = s.db.pool.Exec(ctx, `
		UPDATE vouch_idempotency SET status = $2, content_type = $3, content_type_bytes = $6, body = $4
		WHERE key = $1 AND status IS NULL AND lease = $5`,
		textKey(key), int32(resp.Status), ctype, body, lease, ctypeBytes)
	if err != nil {
		return fmt.Errorf("pgstore: storing idempotent response: %w", err)
	}
	return nil
}

// Release implements [router.IdempotencyStore]. It forgets key only if it
// is still in flight under lease.
func (s *IdempotencyStore) Release(ctx context.Context, key, lease string) error {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM vouch_idempotency WHERE key = $1 AND status IS NULL AND lease = $2`, textKey(key), lease); err != nil {
		return fmt.Errorf("pgstore: releasing idempotency key: %w", err)
	}
	return nil
}

// DeleteExpired removes the keys whose response expired at now, and the
// reservations whose lease lapsed at now and whose window ended too. It
// returns how many it removed.
func (s *IdempotencyStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "idempotency keys", "vouch_idempotency",
		"expires_at <= $1 AND (status IS NOT NULL OR lease_until <= $1)")
}
