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
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// A server restarted on its database with another model behind session
// 12 forgets what the database learned of session 12, and only of it;
// a restart with the same panel forgets nothing.
func TestRun_panelChangeForgets(t *testing.T) {
	dbURL := databaseURL(t)
	schema := freshSchema(t, dbURL)
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
		_, log, stop := startServerBanner(t, "-workers", panel(model12), "-database-url", dbURL, "-database-schema", schema)
		if err := stop(); err != nil {
			t.Fatalf("server with %s behind session 12: %v", model12, err)
		}
		return log.String()
	}

	ctx := context.Background()
	db, err := pgstore.Open(ctx, dbURL, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	store := db.Reputation()
	start("judge-b") // the first start records each session's worker
	keys := []reputation.Key{{Session: 11}, {Session: 11, Operation: "validate_v3", Kind: "tool_output"}, {Session: 12}, {Session: 12, Operation: "validate_v3", Kind: "tool_output"}}
	var learned []reputation.Delta
	for _, k := range keys {
		learned = append(learned, reputation.Delta{Key: k, Delta: reputation.Record{Right: 6, Wrong: 2}})
	}
	if err := store.Add(ctx, 0, learned); err != nil {
		t.Fatal(err)
	}
	full := []reputation.Record{{Right: 6, Wrong: 2}, {Right: 6, Wrong: 2}}

	if log := start("judge-b"); strings.Contains(log, "worker changed") {
		t.Errorf("a restart with the same panel logged a change:\n%s", log)
	}
	if diff := cmp.Diff(append(full, full...), reputationtest.Load(t, store, keys...)); diff != "" {
		t.Errorf("after a restart with the same panel (-want +got):\n%s", diff)
	}

	log := start("judge-c")
	if !strings.Contains(log, "worker changed") || !strings.Contains(log, "session=12") || strings.Contains(log, "session=11") {
		t.Errorf("a restart with another model behind session 12 logged, want session 12's change only:\n%s", log)
	}
	if diff := cmp.Diff(append(full, make([]reputation.Record, 2)...), reputationtest.Load(t, store, keys...)); diff != "" {
		t.Errorf("after a restart with another model behind session 12 (-want +got):\n%s", diff)
	}
}
