package boltstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/boltstore"
)

// What a session earned survives a restart: the record is read back from
// the file.
func Example() {
	dir, err := os.MkdirTemp("", "reputation")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "reputation.db")
	ctx := context.Background()
	k := reputation.Key{Session: 1}

	s, err := boltstore.Open(path, 0)
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Add(ctx, reputation.DefaultHorizon, []reputation.Delta{{Key: k, Delta: reputation.Record{Right: 9, Wrong: 1}}}); err != nil {
		log.Fatal(err)
	}
	s.Close()

	s, err = boltstore.Open(path, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	recs, err := s.Load(ctx, []reputation.Key{k})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("reliability %.3f\n", recs[0].Reliability(reputation.DefaultPrior()))
	// Output: reliability 0.867
}
