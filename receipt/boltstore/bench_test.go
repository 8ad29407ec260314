package boltstore_test

import (
	"path/filepath"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkRawBolt is the baseline of BenchmarkStore: the same work done
// on bbolt directly, "put" one 1 KiB value in its own fsync'd transaction
// and "get" one value in a read transaction, without the store's expiry
// index, record encoding or checks. The ratio of the two is the cost of
// the store over the database.
func BenchmarkRawBolt(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	bucket, value := []byte("receipts"), make([]byte, 1024)
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		b.Fatal(err)
	}
	key := func(i int) []byte { return strconv.AppendInt([]byte("rcpt_"), int64(i), 10) }
	b.Run("put", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(key(i), value) }); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			err := db.View(func(tx *bolt.Tx) error {
				if v := tx.Bucket(bucket).Get(key(0)); len(v) != len(value) {
					b.Fatalf("got %d bytes, want %d", len(v), len(value))
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
