package boltstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vouchkit/vouch/x402"
)

// PaymentIDs is an x402.PaymentIDStore in the ledger's file, so that the
// first response to each payment id survives a restart: give it to
// x402.MiddlewareConfig.PaymentIDs. Each method is one bbolt transaction;
// of concurrent Begins of one id exactly one reports true. An id is kept
// until its until, after which it may begin again; DeleteExpired removes
// the expired ones. Finish and Release act on the record of the Begin
// that recorded the same until, and on no other.
type PaymentIDs struct {
	db *bolt.DB
}

var _ x402.PaymentIDStore = (*PaymentIDs)(nil)

// PaymentIDs returns the payment id store of the ledger's file.
func (l *Ledger) PaymentIDs() *PaymentIDs { return &PaymentIDs{db: l.db} }

// paymentID is the record of one id.
type paymentID struct {
	Record x402.PaymentIDRecord
	Until  time.Time
}

func getID(tx *bolt.Tx, id string) (paymentID, bool, error) {
	raw := tx.Bucket(bucketIDs).Get([]byte(id))
	if raw == nil {
		return paymentID{}, false, nil
	}
	var k paymentID
	if err := json.Unmarshal(raw, &k); err != nil {
		return paymentID{}, false, fmt.Errorf("payment id %s: %w", id, err)
	}
	return k, true, nil
}

func putID(tx *bolt.Tx, id string, k paymentID) error {
	raw, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketIDs).Put([]byte(id), raw)
}

// Begin implements x402.PaymentIDStore.
func (s *PaymentIDs) Begin(ctx context.Context, id, request string, now, until time.Time) (x402.PaymentIDRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return x402.PaymentIDRecord{}, false, err
	}
	var (
		rec   x402.PaymentIDRecord
		fresh bool
	)
	err := s.db.Update(func(tx *bolt.Tx) error {
		k, ok, err := getID(tx, id)
		if err != nil {
			return err
		}
		if ok && now.Before(k.Until) {
			rec = k.Record
			return nil
		}
		rec, fresh = x402.PaymentIDRecord{Request: request}, true
		return putID(tx, id, paymentID{Record: rec, Until: until})
	})
	if err != nil {
		return x402.PaymentIDRecord{}, false, fmt.Errorf("boltstore: beginning payment id: %w", err)
	}
	return rec, fresh, nil
}

// Finish implements x402.PaymentIDStore.
func (s *PaymentIDs) Finish(ctx context.Context, id string, until, keep time.Time, r x402.PaymentIDRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		k, ok, err := getID(tx, id)
		if err != nil || !ok || !k.Until.Equal(until) {
			return err
		}
		r.Done = true
		k.Record, k.Until = r, keep
		return putID(tx, id, k)
	})
	if err != nil {
		return fmt.Errorf("boltstore: keeping a response by payment id: %w", err)
	}
	return nil
}

// Release implements x402.PaymentIDStore.
func (s *PaymentIDs) Release(ctx context.Context, id string, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		k, ok, err := getID(tx, id)
		if err != nil || !ok || !k.Until.Equal(until) || k.Record.Done {
			return err
		}
		return tx.Bucket(bucketIDs).Delete([]byte(id))
	})
	if err != nil {
		return fmt.Errorf("boltstore: releasing payment id: %w", err)
	}
	return nil
}

// DeleteExpired removes the ids whose until has passed at now and
// returns how many it removed.
func (s *PaymentIDs) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	n, err := deleteUntil(ctx, s.db, bucketIDs, now, func(raw []byte) (time.Time, error) {
		var k paymentID
		err := json.Unmarshal(raw, &k)
		return k.Until, err
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: deleting expired payment ids: %w", err)
	}
	return n, nil
}

// deleteUntil deletes, in one transaction, the records of bucket whose
// time (until, read from the record) is not after now, and returns how
// many it deleted.
func deleteUntil(ctx context.Context, db *bolt.DB, bucket []byte, now time.Time, until func(raw []byte) (time.Time, error)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		var expired [][]byte
		err := b.ForEach(func(key, raw []byte) error {
			t, err := until(raw)
			if err != nil {
				return fmt.Errorf("%s %s: %w", bucket, key, err)
			}
			if !now.Before(t) {
				expired = append(expired, key)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, key := range expired {
			if err := b.Delete(key); err != nil {
				return err
			}
		}
		n = len(expired)
		return nil
	})
	return n, err
}
