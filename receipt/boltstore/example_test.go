package boltstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/boltstore"
)

// A receipt put in the store survives closing and reopening the file, and
// is not returned once it has expired.
func Example() {
	dir, _ := os.MkdirTemp("", "boltstore-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "receipts.db")
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

	s, err := boltstore.Open(path, time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = s.Put(ctx, receipt.Record{
		ID: "rcpt_example", Data: []byte(`{"receipt_id":"rcpt_example"}`), Owner: "alice",
		Visibility: receipt.VisibilityPrivate, ExpiresAt: now.Add(7 * 24 * time.Hour),
	})
	fmt.Println("put:", err)
	s.Close()

	s, _ = boltstore.Open(path, time.Second)
	defer s.Close()
	rec, err := s.Get(ctx, "rcpt_example", now)
	fmt.Println("after reopening:", string(rec.Data), err)
	_, err = s.Get(ctx, "rcpt_example", now.Add(8*24*time.Hour))
	fmt.Println("a week and a day later:", err != nil)
	// Output:
	// put: <nil>
	// after reopening: {"receipt_id":"rcpt_example"} <nil>
	// a week and a day later: true
}
