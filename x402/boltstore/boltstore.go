// Package boltstore keeps a server's escrowed x402 payments in one file on
// disk, so that they survive its restart: it is an x402.EscrowLedger on the
// embedded database go.etcd.io/bbolt. The payments a server held and had not
// finished are found again (Ledger.Unfinished) and finished by
// escrow.Recovery, and every lifecycle operation's first outcome is
// replayed instead of being sent twice.
//
// It lives apart from package x402 so that programs that keep their
// ledger in memory or in PostgreSQL do not link bbolt.
//
// Each method that writes is one bbolt transaction, committed with fsync
// before it returns; bbolt serializes writers, so every step of a
// payment's lifecycle is taken on the record as it stands, never on a
// stale copy: of concurrent Records of one operation exactly one wins.
// A payment is its JSON record under its id; the held payments are
// indexed by the time of their hold. A payment is kept until
// Ledger.DeleteExpired finds its refund deadline passed. One file serves one process: bbolt
// locks the file, so servers that share their payments share a
// PostgreSQL database instead (pgstore.EscrowLedger).
package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

var (
	bucketPayments = []byte("escrow")       // id → JSON record
	bucketHeld     = []byte("escrow-held")  // held at (unix ns, big endian) ‖ id → id
	bucketClaims   = []byte("escrow-claim") // id → claimed until (unix ns, big endian)
	bucketIDs      = []byte("payment-id")   // payment id → JSON paymentID
	bucketOutcomes = []byte("outcome")      // proof's replay key → JSON keptOutcome
)

// Ledger is an x402.EscrowLedger in a bbolt file. It is safe for
// concurrent use. Close it when done: the file stays locked against
// other processes until then.
type Ledger struct {
	// Now returns the current time, which stamps outcomes recorded
	// without one; nil means time.Now. Set it before first use.
	Now func() time.Time

	db *bolt.DB
}

var (
	_ x402.EscrowLedger = (*Ledger)(nil)
	_ escrow.Claimer    = (*Ledger)(nil)
)

// Open opens the ledger at path, creating the file (mode 0600) if it does
// not exist. It waits at most lockTimeout for another process (or another
// Open of path in this one, not yet closed) to release the file lock;
// zero or less means one second.
func Open(path string, lockTimeout time.Duration) (*Ledger, error) {
	if lockTimeout <= 0 {
		lockTimeout = time.Second
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("boltstore: failed to open %s: another process (or another Open in this one) still holds it locked after %s: %w", path, lockTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: failed to open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketPayments, bucketHeld, bucketClaims, bucketIDs, bucketOutcomes} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: failed to prepare %s: %w", path, err)
	}
	return &Ledger{db: db}, nil
}

// Close closes the file.
func (l *Ledger) Close() error { return l.db.Close() }

func (l *Ledger) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// The times of the holds the index of held payments orders: those whose
// nanoseconds since 1970 an int64 holds.
var (
	minHeldAt = time.Unix(0, 0)
	maxHeldAt = time.Unix(0, math.MaxInt64)
)

// heldKey is p's key in the index of held payments: the time of its hold
// in nanoseconds since 1970 (big endian), then its id.
func heldKey(p x402.EscrowPayment) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(p.HeldAt.UnixNano()))
	return append(k, p.ID...)
}

func get(tx *bolt.Tx, id string) (x402.EscrowPayment, error) {
	raw := tx.Bucket(bucketPayments).Get([]byte(id))
	if raw == nil {
		return x402.EscrowPayment{}, x402.ErrEscrowUnknown
	}
	var p x402.EscrowPayment
	if err := json.Unmarshal(raw, &p); err != nil {
		return x402.EscrowPayment{}, fmt.Errorf("boltstore: escrow payment %s: %w", id, err)
	}
	return p, nil
}

// put writes p, and keeps it in the index of held payments while it is
// held.
func put(tx *bolt.Tx, p x402.EscrowPayment) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketPayments).Put([]byte(p.ID), raw); err != nil {
		return err
	}
	if p.Finished() {
		if err := tx.Bucket(bucketClaims).Delete([]byte(p.ID)); err != nil {
			return err
		}
		return tx.Bucket(bucketHeld).Delete(heldKey(p))
	}
	return tx.Bucket(bucketHeld).Put(heldKey(p), []byte(p.ID))
}

// Hold implements x402.EscrowLedger. It refuses a payment held before
// 1970 or after 2262 (HeldAt zero, say), which its index of held payments
// could not list in order.
func (l *Ledger) Hold(ctx context.Context, p x402.EscrowPayment) (x402.EscrowPayment, bool, error) {
	if err := ctx.Err(); err != nil {
		return x402.EscrowPayment{}, false, err
	}
	p, err := p.Held()
	if err != nil {
		return x402.EscrowPayment{}, false, err
	}
	if p.HeldAt.Before(minHeldAt) || p.HeldAt.After(maxHeldAt) {
		return x402.EscrowPayment{}, false, fmt.Errorf("boltstore: escrow payment %s held at %s: the ledger orders holds from 1970 to 2262 only", p.ID, p.HeldAt.UTC().Format(time.RFC3339))
	}
	var out x402.EscrowPayment
	first := false
	err = l.db.Update(func(tx *bolt.Tx) error {
		old, err := get(tx, p.ID)
		if err == nil {
			out = old
			return nil
		}
		if !errors.Is(err, x402.ErrEscrowUnknown) {
			return err
		}
		out, first = p, true
		return put(tx, p)
	})
	if err != nil {
		return x402.EscrowPayment{}, false, wrap(err, "holding")
	}
	return out, first, nil
}

// Decide implements x402.EscrowLedger.
func (l *Ledger) Decide(ctx context.Context, id, verdict, capture string) (x402.EscrowPayment, error) {
	if err := ctx.Err(); err != nil {
		return x402.EscrowPayment{}, err
	}
	var out x402.EscrowPayment
	err := l.db.Update(func(tx *bolt.Tx) error {
		p, err := get(tx, id)
		if err != nil {
			return err
		}
		next, changed, err := p.Decided(verdict, capture)
		if err != nil {
			return err
		}
		out = next
		if !changed {
			return nil
		}
		return put(tx, next)
	})
	if err != nil {
		return x402.EscrowPayment{}, wrap(err, "deciding")
	}
	return out, nil
}

// Record implements x402.EscrowLedger.
func (l *Ledger) Record(ctx context.Context, id string, o x402.EscrowOutcome) (x402.EscrowPayment, x402.EscrowOutcome, bool, error) {
	if err := ctx.Err(); err != nil {
		return x402.EscrowPayment{}, x402.EscrowOutcome{}, false, err
	}
	var (
		out   x402.EscrowPayment
		first x402.EscrowOutcome
		fresh bool
	)
	now := l.now()
	err := l.db.Update(func(tx *bolt.Tx) error {
		p, err := get(tx, id)
		if err != nil {
			return err
		}
		if out, first, fresh, err = p.Recorded(o, now); err != nil || !fresh {
			return err
		}
		return put(tx, out)
	})
	if err != nil {
		return x402.EscrowPayment{}, x402.EscrowOutcome{}, false, wrap(err, "recording")
	}
	return out, first, fresh, nil
}

// Get implements x402.EscrowLedger.
func (l *Ledger) Get(ctx context.Context, id string) (x402.EscrowPayment, error) {
	if err := ctx.Err(); err != nil {
		return x402.EscrowPayment{}, err
	}
	var out x402.EscrowPayment
	err := l.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = get(tx, id)
		return err
	})
	if err != nil {
		return x402.EscrowPayment{}, wrap(err, "reading")
	}
	return out, nil
}

// Unfinished implements x402.EscrowLedger.
func (l *Ledger) Unfinished(ctx context.Context, limit int) ([]x402.EscrowPayment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []x402.EscrowPayment
	err := l.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketHeld).Cursor()
		for k, id := c.First(); k != nil && (limit <= 0 || len(out) < limit); k, id = c.Next() {
			p, err := get(tx, string(id))
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "listing unfinished payments")
	}
	return out, nil
}

// Claim implements escrow.Claimer. It reports false, without an error,
// for a payment that is finished or that the ledger does not hold (it
// was forgotten since it was listed).
func (l *Ledger) Claim(ctx context.Context, id string, now, until time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	mine := false
	err := l.db.Update(func(tx *bolt.Tx) error {
		p, err := get(tx, id)
		if errors.Is(err, x402.ErrEscrowUnknown) {
			return nil
		}
		if err != nil || p.Finished() {
			return err
		}
		claims := tx.Bucket(bucketClaims)
		if c := claims.Get([]byte(id)); len(c) == 8 && int64(binary.BigEndian.Uint64(c)) > now.UnixNano() {
			return nil
		}
		mine = true
		return claims.Put([]byte(id), binary.BigEndian.AppendUint64(nil, uint64(until.UnixNano())))
	})
	if err != nil {
		return false, wrap(err, "claiming")
	}
	return mine, nil
}

// DeleteExpired removes the payments whose refund deadline has passed at
// now, held or finished: none can be captured, voided or refunded any
// more (a hold past its capture deadline is its payer's to reclaim). It
// reads every payment, in one write transaction; run it now and then (a
// payment without a refund deadline is kept). It returns how many it
// removed.
func (l *Ledger) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := l.db.Update(func(tx *bolt.Tx) error {
		var expired []x402.EscrowPayment
		err := tx.Bucket(bucketPayments).ForEach(func(_, raw []byte) error {
			var p x402.EscrowPayment
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			if !p.RefundDeadline.IsZero() && !now.Before(p.RefundDeadline) {
				expired = append(expired, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, p := range expired {
			for _, del := range []struct{ bucket, key []byte }{{bucketPayments, []byte(p.ID)}, {bucketHeld, heldKey(p)}, {bucketClaims, []byte(p.ID)}} {
				if err := tx.Bucket(del.bucket).Delete(del.key); err != nil {
					return err
				}
			}
		}
		n = len(expired)
		return nil
	})
	if err != nil {
		return 0, wrap(err, "deleting expired")
	}
	return n, nil
}

// wrap leaves the ledger's own errors as they are, for errors.Is, and
// names the step of any other.
func wrap(err error, step string) error {
	if errors.Is(err, x402.ErrEscrowUnknown) || errors.Is(err, x402.ErrEscrowState) || errors.Is(err, x402.ErrEscrowAmount) {
		return err
	}
	return fmt.Errorf("boltstore: %s escrow payment: %w", step, err)
}
