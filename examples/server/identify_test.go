package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/reputation"
	reputationbolt "github.com/vouchkit/vouch/reputation/boltstore"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// A server restarted on its database with another model behind session
// 12 forgets what the database learned of session 12, and only of it;
// a restart with the same panel forgets nothing.
func TestRun_panelChangeForgets(t *testing.T) {
	dbURL := databaseURL(t)
	schema := freshSchema(t, dbURL)
	db, err := pgstore.Open(context.Background(), dbURL, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	testPanelChange(t, []string{"-database-url", dbURL, "-database-schema", schema},
		func(*testing.T) (reputation.Store, func()) { return db.Reputation(), func() {} })
}

// The same with the reputation in a bbolt file (-reputation), read
// between the server's runs, which lock the file.
func TestRun_panelChangeForgets_file(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reputation.db")
	testPanelChange(t, []string{"-reputation", path}, func(t *testing.T) (reputation.Store, func()) {
		s, err := reputationbolt.Open(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s, func() { s.Close() }
	})
}

// testPanelChange starts the server with args and a panel of two chat
// sessions three times, 11 and 12 (the first time judge-b behind 12), each
// run stopped before the next, and reads the server's reputation between
// runs through open: records written after the first run are kept by a
// run with the same panel, and session 12's go, session 11's staying,
// when judge-c is behind 12, which the log names.
func testPanelChange(t *testing.T, args []string, open func(*testing.T) (reputation.Store, func())) {
	dir := t.TempDir()
	panel := func(model12 string) string {
		path := filepath.Join(dir, model12+".json")
		body := fmt.Sprintf(`{"sessions": [
  {"id": 11, "worker": {"base_url": "http://127.0.0.1:9/v1", "model": "judge-a"}},
  {"id": 12, "worker": {"base_url": "http://127.0.0.1:9/v1", "model": %q}}
]}`, model12)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	start := func(model12 string) string {
		t.Helper()
		_, log, stop := startServerBanner(t, append([]string{"-workers", panel(model12)}, args...)...)
		if err := stop(); err != nil {
			t.Fatalf("server with %s behind session 12: %v", model12, err)
		}
		return log.String()
	}
	keys := []reputation.Key{{Session: 11}, {Session: 11, Operation: "validate_v3", Kind: "tool_output"}, {Session: 12}, {Session: 12, Operation: "validate_v3", Kind: "tool_output"}}
	read := func() []reputation.Record {
		t.Helper()
		store, done := open(t)
		defer done()
		return reputationtest.Load(t, store, keys...)
	}

	start("judge-b") // the first start records each session's worker
	store, done := open(t)
	var learned []reputation.Delta
	for _, k := range keys {
		learned = append(learned, reputation.Delta{Key: k, Delta: reputation.Record{Right: 6, Wrong: 2}})
	}
	err := store.Add(context.Background(), 0, learned)
	done()
	if err != nil {
		t.Fatal(err)
	}
	full := []reputation.Record{{Right: 6, Wrong: 2}, {Right: 6, Wrong: 2}}

	if log := start("judge-b"); strings.Contains(log, "worker changed") {
		t.Errorf("a restart with the same panel logged a change:\n%s", log)
	}
	if diff := cmp.Diff(append(full, full...), read()); diff != "" {
		t.Errorf("after a restart with the same panel (-want +got):\n%s", diff)
	}

	log := start("judge-c")
	if !strings.Contains(log, "worker changed") || !strings.Contains(log, "session=12") || strings.Contains(log, "session=11") {
		t.Errorf("a restart with another model behind session 12 logged, want session 12's change only:\n%s", log)
	}
	if diff := cmp.Diff(append(full, make([]reputation.Record, 2)...), read()); diff != "" {
		t.Errorf("after a restart with another model behind session 12 (-want +got):\n%s", diff)
	}
}
