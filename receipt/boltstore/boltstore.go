// Package boltstore is a durable receipt.Store in one file on disk, on the
// embedded database go.etcd.io/bbolt.
//
// It lives apart from package receipt so that programs that keep receipts
// in memory or in PostgreSQL do not link bbolt.
//
// Each Put is one bbolt transaction, committed with fsync before Put
// returns: a receipt whose Put returned survives a crash of the process
// (the package's tests kill a writer with SIGKILL and reopen the file).
// The file holds two buckets: receipts by id, and an index by expiry that
// DeleteExpired walks in order, so a sweep reads only what it deletes.
// Expiry times are kept to the microsecond.
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vouchkit/vouch/receipt"
)

var (
	bucketReceipts = []byte("receipts")
	bucketExpiry   = []byte("expiry")
)

// formatVersion is the first byte of every stored value.
const formatVersion = 1

// Store is a receipt.Store in a bbolt file. It is safe for concurrent use;
// writes are serialized by bbolt. Close it when done: the file stays
// locked against other processes until then.
type Store struct {
	db *bolt.DB
}

// Open opens the store at path, creating the file (mode 0600) if it does
// not exist. It waits at most lockTimeout for another process to release
// the file lock; zero means one second.
func Open(path string, lockTimeout time.Duration) (*Store, error) {
	if lockTimeout <= 0 {
		lockTimeout = time.Second
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, fmt.Errorf("boltstore: failed to open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketReceipts, bucketExpiry} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: failed to prepare %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file. Using the Store afterwards returns an error.
func (s *Store) Close() error { return s.db.Close() }

// meta is what a stored value keeps beside the receipt bytes.
type meta struct {
	Owner          string             `json:"owner"`
	Visibility     receipt.Visibility `json:"visibility"`
	Counterparties []string           `json:"counterparties,omitempty"`
	ExpiresAt      int64              `json:"expires_at"` // Unix microseconds
}

// Put stores rec and commits it to disk before returning.
func (s *Store) Put(ctx context.Context, rec receipt.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	m, err := json.Marshal(meta{
		Owner:          rec.Owner,
		Visibility:     rec.Visibility,
		Counterparties: rec.Counterparties,
		ExpiresAt:      rec.ExpiresAt.UnixMicro(),
	})
	if err != nil {
		return fmt.Errorf("boltstore: failed to encode record %s: %w", rec.ID, err)
	}
	val := make([]byte, 0, 1+binary.MaxVarintLen64+len(m)+len(rec.Data))
	val = append(val, formatVersion)
	val = binary.AppendUvarint(val, uint64(len(m)))
	val = append(append(val, m...), rec.Data...)
	id := []byte(rec.ID)
	err = s.db.Update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketReceipts)
		if recs.Get(id) != nil {
			return fmt.Errorf("%w: %s", receipt.ErrDuplicate, rec.ID)
		}
		if err := recs.Put(id, val); err != nil {
			return err
		}
		return tx.Bucket(bucketExpiry).Put(expiryKey(rec.ExpiresAt.UnixMicro(), id), nil)
	})
	if err != nil && !errors.Is(err, receipt.ErrDuplicate) {
		return fmt.Errorf("boltstore: failed to put %s: %w", rec.ID, err)
	}
	return err
}

// Get returns the record with id if it is live at now.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (receipt.Record, error) {
	if err := ctx.Err(); err != nil {
		return receipt.Record{}, err
	}
	var rec receipt.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		val := tx.Bucket(bucketReceipts).Get([]byte(id))
		if val == nil {
			return receipt.ErrNotFound
		}
		var err error
		rec, err = decode(id, val) // copies out of the mmap
		return err
	})
	if err != nil {
		return receipt.Record{}, err
	}
	if !now.Before(rec.ExpiresAt) {
		return receipt.Record{}, receipt.ErrNotFound
	}
	return rec, nil
}

// DeleteExpired removes the records expired at now in one transaction.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// A record is expired when its expiry (a whole microsecond) is at or
	// before now, so every index key below the one for now+1µs goes.
	limit := expiryKey(now.UnixMicro()+1, nil)
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		recs, idx := tx.Bucket(bucketReceipts), tx.Bucket(bucketExpiry)
		c := idx.Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k, limit) < 0; k, _ = c.First() {
			if err := recs.Delete(k[8:]); err != nil {
				return err
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: failed to delete expired records: %w", err)
	}
	return n, nil
}

// expiryKey orders by expiry: 8 bytes of big-endian microseconds with the
// sign bit flipped (so times before 1970 sort first), then the id.
func expiryKey(micros int64, id []byte) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(micros)^(1<<63))
	return append(k, id...)
}

// decode reads a stored value. The returned record shares no memory with
// val, which bbolt owns.
func decode(id string, val []byte) (receipt.Record, error) {
	if len(val) < 2 || val[0] != formatVersion {
		return receipt.Record{}, fmt.Errorf("boltstore: record %s has an unknown format", id)
	}
	n, w := binary.Uvarint(val[1:])
	if w <= 0 || n > uint64(len(val)-1-w) {
		return receipt.Record{}, fmt.Errorf("boltstore: record %s is truncated", id)
	}
	body := val[1+w:]
	var m meta
	if err := json.Unmarshal(body[:n], &m); err != nil {
		return receipt.Record{}, fmt.Errorf("boltstore: record %s: %w", id, err)
	}
	return receipt.Record{
		ID:             id,
		Data:           bytes.Clone(body[n:]),
		Owner:          m.Owner,
		Visibility:     m.Visibility,
		Counterparties: m.Counterparties,
		ExpiresAt:      time.UnixMicro(m.ExpiresAt).UTC(),
	}, nil
}
