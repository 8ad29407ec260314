package boltstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vouchkit/vouch/x402"
)

// Outcomes is an x402.OutcomeStore in the ledger's file, so that the
// outcome of a spent proof (the answer delivered, the refusal, or the
// answer held back for a capture that may still happen) survives a
// restart: give it to x402.MiddlewareConfig.Outcomes beside the ledger.
// With the ledger in a file and the outcomes in memory, the retry of a
// pending capture after a restart finds no outcome and is answered 402
// "already used", while package x402/escrow's Recovery captures the
// payment. Each method is one bbolt transaction; a Keep replaces what was
// kept under its key. An outcome is kept until its until, however long
// (x402.Middleware asks at most its MaxValidity); DeleteExpired removes
// the expired ones.
type Outcomes struct {
	db *bolt.DB
}

var _ x402.OutcomeStore = (*Outcomes)(nil)

// Outcomes returns the outcome store of the ledger's file.
func (l *Ledger) Outcomes() *Outcomes { return &Outcomes{db: l.db} }

// keptOutcome is the record of one outcome.
type keptOutcome struct {
	Outcome x402.Outcome
	Until   time.Time
}

// Keep implements x402.OutcomeStore.
func (s *Outcomes) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := json.Marshal(keptOutcome{Outcome: o, Until: until})
	if err != nil {
		return fmt.Errorf("boltstore: encoding an outcome: %w", err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketOutcomes).Put([]byte(key), raw) }); err != nil {
		return fmt.Errorf("boltstore: keeping an outcome: %w", err)
	}
	return nil
}

// Lookup implements x402.OutcomeStore.
func (s *Outcomes) Lookup(ctx context.Context, key string, now time.Time) (x402.Outcome, bool, error) {
	if err := ctx.Err(); err != nil {
		return x402.Outcome{}, false, err
	}
	var (
		k     keptOutcome
		found bool
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketOutcomes).Get([]byte(key))
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, &k)
	})
	if err != nil {
		return x402.Outcome{}, false, fmt.Errorf("boltstore: looking up an outcome: %w", err)
	}
	if !found || !now.Before(k.Until) {
		return x402.Outcome{}, false, nil
	}
	return k.Outcome, true, nil
}

// DeleteExpired removes the outcomes whose until has passed at now and
// returns how many it removed.
func (s *Outcomes) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	n, err := deleteUntil(ctx, s.db, bucketOutcomes, now, func(raw []byte) (time.Time, error) {
		var k keptOutcome
		err := json.Unmarshal(raw, &k)
		return k.Until, err
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: deleting expired outcomes: %w", err)
	}
	return n, nil
}
