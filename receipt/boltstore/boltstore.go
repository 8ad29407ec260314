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
//
// The store keeps the transparency log of its receipts (receipt.LogReader)
// in a third bucket, appended in the transaction that puts the receipt:
// a receipt whose Put returned is in the log, and a Put that failed left
// neither. Records written before the log existed have LogIndex -1.
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
	bolterrors "go.etcd.io/bbolt/errors"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/receipt"
)

var (
	bucketReceipts = []byte("receipts")
	bucketExpiry   = []byte("expiry")
	// bucketLog holds the transparency log: the key "size" (8 bytes, big
	// endian) and each stored hash under its tlog.StoredHashIndex (8
	// bytes, big endian).
	bucketLog = []byte("log")
	keySize   = []byte("size")
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
// not exist. It waits at most lockTimeout for another process (or another
// Open of path in this one, not yet closed) to release the file lock;
// zero or less means one second.
func Open(path string, lockTimeout time.Duration) (*Store, error) {
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
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketReceipts, bucketExpiry, bucketLog} {
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
	LogIndex       *int64             `json:"log_index,omitempty"`
}

// Put stores rec and commits it to disk before returning.
func (s *Store) Put(ctx context.Context, rec receipt.Record) error {
	return s.put(ctx, rec, true)
}

// put stores rec, appending it to the log when logged is set (the
// benchmarks compare the two).
func (s *Store) put(ctx context.Context, rec receipt.Record, logged bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	id := []byte(rec.ID)
	err := s.db.Update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketReceipts)
		if recs.Get(id) != nil {
			return fmt.Errorf("%w: %s", receipt.ErrDuplicate, rec.ID)
		}
		m := meta{
			Owner:          rec.Owner,
			Visibility:     rec.Visibility,
			Counterparties: rec.Counterparties,
			ExpiresAt:      rec.ExpiresAt.UnixMicro(),
		}
		if logged {
			idx, err := appendLog(tx.Bucket(bucketLog), rec.Data)
			if err != nil {
				return err
			}
			m.LogIndex = &idx
		}
		val, err := encode(m, rec.Data)
		if err != nil {
			return fmt.Errorf("boltstore: failed to encode record %s: %w", rec.ID, err)
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

// encode writes a stored value: the format version, the length of the
// JSON meta, the meta, the data.
func encode(m meta, data []byte) ([]byte, error) {
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	val := make([]byte, 0, 1+binary.MaxVarintLen64+len(mj)+len(data))
	val = append(val, formatVersion)
	val = binary.AppendUvarint(val, uint64(len(mj)))
	return append(append(val, mj...), data...), nil
}

// appendLog appends leaf to the log in b and returns its index.
func appendLog(b *bolt.Bucket, leaf []byte) (int64, error) {
	b.FillPercent = 1 // keys only grow: fill each page before splitting
	n := logSize(b)
	first, hashes, err := receipt.LogAppend(n, leaf, func(indexes []int64) ([]tlog.Hash, error) {
		return readHashes(b, indexes)
	})
	if err != nil {
		return 0, err
	}
	for i, h := range hashes {
		if err := b.Put(indexKey(first+int64(i)), h[:]); err != nil {
			return 0, err
		}
	}
	if err := b.Put(keySize, indexKey(n+1)); err != nil {
		return 0, err
	}
	return n, nil
}

func logSize(b *bolt.Bucket) int64 {
	v := b.Get(keySize)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func readHashes(b *bolt.Bucket, indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		v := b.Get(indexKey(x))
		if len(v) != tlog.HashSize {
			return nil, fmt.Errorf("boltstore: stored hash %d is missing from the log", x)
		}
		copy(out[i][:], v)
	}
	return out, nil
}

func indexKey(n int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(n))
}

// LogSize returns the number of receipts in the log.
func (s *Store) LogSize(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		n = logSize(tx.Bucket(bucketLog))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: failed to read the log size: %w", err)
	}
	return n, nil
}

// ReadLogHashes returns the log's stored hashes at indexes.
func (s *Store) ReadLogHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []tlog.Hash
	var readErr error // a missing hash, named by readHashes
	err := s.db.View(func(tx *bolt.Tx) error {
		out, readErr = readHashes(tx.Bucket(bucketLog), indexes)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: failed to read the log: %w", err)
	}
	return out, readErr
}

// Get returns the record with id if it is live at now, and an error
// wrapping receipt.ErrNotFound if there is none or it has expired.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (receipt.Record, error) {
	if err := ctx.Err(); err != nil {
		return receipt.Record{}, err
	}
	var rec receipt.Record
	var readErr error // ErrNotFound, or a record decode names
	err := s.db.View(func(tx *bolt.Tx) error {
		val := tx.Bucket(bucketReceipts).Get([]byte(id))
		if val == nil {
			readErr = receipt.ErrNotFound
			return nil
		}
		rec, readErr = decode(id, val) // copies out of the mmap
		return nil
	})
	if err != nil {
		return receipt.Record{}, fmt.Errorf("boltstore: failed to get %s: %w", id, err)
	}
	if readErr != nil {
		return receipt.Record{}, readErr
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
		LogIndex:       logIndex(m.LogIndex),
	}, nil
}

func logIndex(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
