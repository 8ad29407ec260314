// Package boltstore is a durable reputation.Store in one file on disk, on
// the embedded database go.etcd.io/bbolt, so that what an engine learned
// about its sessions survives a restart.
//
// It lives apart from package reputation so that programs that keep
// reputation in memory or in PostgreSQL do not link bbolt.
//
// Each Add is one bbolt transaction, committed with fsync before Add
// returns; bbolt serializes writers, so a delta is applied to the record
// as it stands, never to a stale copy. A record is 16 bytes (its two
// counts as IEEE 754 bits) under a key of the session (8 bytes, big
// endian) followed by the operation and the kind, each behind its length.
// One file holds one process's store: bbolt locks the file, so servers
// that must learn together share a PostgreSQL database instead
// (pgstore.ReputationStore).
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vouchkit/vouch/reputation"
)

var bucketRecords = []byte("reputation")

// Store is a reputation.Store in a bbolt file. It is safe for concurrent
// use. Close it when done: the file stays locked against other processes
// until then.
type Store struct {
	db *bolt.DB
}

var _ reputation.Store = (*Store)(nil)

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
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketRecords)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: failed to prepare %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Load implements reputation.Store.
func (s *Store) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := reputation.CheckKeys(keys); err != nil {
		return nil, err
	}
	out := make([]reputation.Record, len(keys))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		for i, k := range keys {
			r, err := decode(b.Get(encodeKey(k)))
			if err != nil {
				return fmt.Errorf("record of %+v: %w", k, err)
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: loading records: %w", err)
	}
	return out, nil
}

// Add implements reputation.Store: the deltas are applied in order, as
// reputation.Record.Add applies them, in one transaction.
func (s *Store) Add(ctx context.Context, horizon float64, deltas []reputation.Delta) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := reputation.CheckDeltas(horizon, deltas); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		return add(tx.Bucket(bucketRecords), horizon, deltas)
	})
	if err != nil {
		return fmt.Errorf("boltstore: adding evidence: %w", err)
	}
	return nil
}

var _ reputation.ConditionalStore = (*Store)(nil)

// AddIf implements reputation.ConditionalStore: cond's record is read and
// the deltas applied in one transaction.
func (s *Store) AddIf(ctx context.Context, horizon float64, cond reputation.Key, want reputation.Record, deltas []reputation.Delta) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := reputation.CheckCondition(horizon, cond, deltas); err != nil {
		return false, err
	}
	applied := false
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		got, err := decode(b.Get(encodeKey(cond)))
		if err != nil {
			return fmt.Errorf("record of %+v: %w", cond, err)
		}
		if got != want {
			return nil
		}
		applied = true
		return add(b, horizon, deltas)
	})
	if err != nil {
		return false, fmt.Errorf("boltstore: adding evidence: %w", err)
	}
	return applied, nil
}

// add applies deltas to the records in b.
func add(b *bolt.Bucket, horizon float64, deltas []reputation.Delta) error {
	for _, d := range deltas {
		k := encodeKey(d.Key)
		r, err := decode(b.Get(k))
		if err != nil {
			return fmt.Errorf("record of %+v: %w", d.Key, err)
		}
		if err := b.Put(k, encode(r.Add(d.Delta, horizon))); err != nil {
			return err
		}
	}
	return nil
}

var _ reputation.SessionDeleter = (*Store)(nil)

// DeleteSessions implements reputation.SessionDeleter: every key that
// begins with one of the sessions is deleted, in one transaction.
func (s *Store) DeleteSessions(ctx context.Context, sessions []int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := reputation.CheckSessions(sessions); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		var keys [][]byte
		for _, session := range sessions {
			prefix := binary.BigEndian.AppendUint64(nil, uint64(session))
			c := b.Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				keys = append(keys, bytes.Clone(k))
			}
		}
		for _, k := range keys { // after the cursors, which a deletion would move
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltstore: deleting sessions: %w", err)
	}
	return nil
}

var _ reputation.PanelDeleter = (*Store)(nil)

// DeletePanel implements reputation.PanelDeleter: the panel's keys under
// operation are read in order, and those of a kind before the bound are
// deleted, in one transaction.
func (s *Store) DeletePanel(ctx context.Context, operation, before string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := reputation.CheckPanelDelete(operation, before); err != nil {
		return 0, err
	}
	prefix := encodeKey(reputation.Key{Session: reputation.PanelSession, Operation: operation})
	prefix = prefix[:len(prefix)-1] // without the empty kind's length
	var keys [][]byte
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			n, w := binary.Uvarint(k[len(prefix):])
			if kind := k[len(prefix)+w:]; w > 0 && uint64(len(kind)) == n && string(kind) < before {
				keys = append(keys, bytes.Clone(k))
			}
		}
		for _, k := range keys { // after the cursor, which a deletion would move
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: deleting the panel's records: %w", err)
	}
	return len(keys), nil
}

// encodeKey writes the session (8 bytes, big endian), then the operation
// and the kind, each behind its length as a uvarint, so that no two keys
// share an encoding.
func encodeKey(k reputation.Key) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(k.Session))
	b = binary.AppendUvarint(b, uint64(len(k.Operation)))
	b = append(b, k.Operation...)
	b = binary.AppendUvarint(b, uint64(len(k.Kind)))
	return append(b, k.Kind...)
}

// errCorrupt is a stored record of the wrong size.
var errCorrupt = errors.New("stored record is not 16 bytes")

// encode writes the two counts as their IEEE 754 bits, so that a record
// reads back exactly as it was computed.
func encode(r reputation.Record) []byte {
	b := binary.BigEndian.AppendUint64(nil, math.Float64bits(r.Right))
	return binary.BigEndian.AppendUint64(b, math.Float64bits(r.Wrong))
}

// decode reads a record that encode wrote; nil is the zero Record.
func decode(v []byte) (reputation.Record, error) {
	if v == nil {
		return reputation.Record{}, nil
	}
	if len(v) != 16 {
		return reputation.Record{}, errCorrupt
	}
	return reputation.Record{
		Right: math.Float64frombits(binary.BigEndian.Uint64(v)),
		Wrong: math.Float64frombits(binary.BigEndian.Uint64(v[8:])),
	}, nil
}
