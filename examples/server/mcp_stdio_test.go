package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust"
)

// TestServeStdio_answersCallsInFlightAtEOF: a host that writes its calls
// and closes stdin, as a shell pipe does, gets the answer of a call still
// running when the input ends before the server returns.
func TestServeStdio_answersCallsInFlightAtEOF(t *testing.T) {
	t.Parallel()
	chat := &chatServer{verdicts: map[string]string{"judge": "INVALID"}}
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		chat.ServeHTTP(w, r)
	}))
	defer worker.Close()
	panel := fmt.Sprintf(`{"sessions": [{"id": 1, "pool": "a", "worker": {"base_url": %q, "model": "judge"}}]}`, worker.URL+"/v1")
	path := filepath.Join(t.TempDir(), "panel.json")
	if err := os.WriteFile(path, []byte(panel), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"-mcp-stdio", "-workers", path}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv, err := newServer(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.state.close()
	defer srv.obs.close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := serveStdio(context.Background(), srv, log, inR, outW)
		outW.Close() // the output ends when serveStdio returns
		served <- err
	}()
	answers := json.NewDecoder(outR)
	send := func(msg string) {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"v0"}}}`)
	var initialized struct{ ID int }
	if err := answers.Decode(&initialized); err != nil || initialized.ID != 1 {
		t.Fatalf("answer to initialize: %+v (%v)", initialized, err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"validate_claim","arguments":{"claimed_result":"17 * 3 = 50","policy":"fast"}}}`)
	<-arrived // the call runs on the worker
	inW.Close()
	close(release)

	type answer struct {
		ID     int
		Result *struct {
			IsError           bool
			StructuredContent trust.Response
		}
		Error *struct{ Message string }
	}
	var got []answer
	for {
		var a answer
		if err := answers.Decode(&a); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if err := <-served; err != nil {
		t.Errorf("serveStdio = %v, want nil at the end of the input", err)
	}
	var statuses []trust.Status
	for _, a := range got {
		if a.ID == 2 && a.Result != nil && !a.Result.IsError {
			statuses = append(statuses, a.Result.StructuredContent.Status)
		}
	}
	if diff := cmp.Diff([]trust.Status{trust.StatusInvalid}, statuses); diff != "" {
		t.Errorf("statuses answered to the call before serveStdio returned (-want +got):\n%s\nanswers: %+v", diff, got)
	}
}
