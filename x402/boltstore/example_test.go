package boltstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/vouchkit/vouch/x402/boltstore"
	"github.com/vouchkit/vouch/x402/x402test"
)

// A hold recorded before a restart is still unfinished after it, with
// its verdict, for escrow.Recovery to capture.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "escrow")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "escrow.db")

	l, err := boltstore.Open(path, 0)
	if err != nil {
		log.Fatal(err)
	}
	p := x402test.Payment(1, "1000")
	if _, _, err := l.Hold(ctx, p); err != nil {
		log.Fatal(err)
	}
	if _, err := l.Decide(ctx, p.ID, "VALID", "1000"); err != nil {
		log.Fatal(err)
	}
	l.Close() // the server stops

	l, err = boltstore.Open(path, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	held, err := l.Unfinished(ctx, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range held {
		fmt.Println(p.State, p.Verdict, p.Capture)
	}
	// Output: held VALID 1000
}
