package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServeStdio_badLines: a line of stdin that is no JSON-RPC message
// (not JSON, two values, a JSON value of another shape, an empty batch,
// an id of no valid type) is answered with the JSON-RPC error the
// specification gives it, -32700 or -32600 with a null id, and the
// server reads on: the calls before and after it are answered, rather
// than the session ended and the calls running cancelled unanswered.
func TestServeStdio_badLines(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags([]string{"-mcp-stdio", "-slow-session", "0s"}, noEnv, io.Discard)
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
		outW.Close()
		served <- err
	}()
	answers := json.NewDecoder(outR)
	send := func(lines ...string) {
		for _, l := range lines {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"v0"}}}`)
	var initialized struct{ ID int }
	if err := answers.Decode(&initialized); err != nil || initialized.ID != 1 {
		t.Fatalf("answer to initialize: %+v (%v)", initialized, err)
	}
	// The answers are read as they come, as a host reads them: an
	// answer written while the input is read is not held up.
	type answer struct {
		ID    json.RawMessage
		Error *struct{ Code int }
	}
	read := make(chan []string, 1)
	go func() {
		var got []string
		for {
			var a answer
			if err := answers.Decode(&a); err != nil {
				if !errors.Is(err, io.EOF) {
					got = append(got, err.Error())
				}
				read <- got
				return
			}
			if a.Error != nil {
				got = append(got, fmt.Sprintf("%s error %d", a.ID, a.Error.Code))
			} else {
				got = append(got, fmt.Sprintf("%s result", a.ID))
			}
		}
	}()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"factcheck","arguments":{"claim":"2 + 2 = 4"}}}`,
		`{bad`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"} {}`,
		"\xff\xfe",
		`5`,
		`[]`,
		`{}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		``,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	inW.Close() // the calls read are answered before the server returns
	got := <-read
	if err := <-served; err != nil {
		t.Errorf("serveStdio = %v, want nil at the end of the input", err)
	}
	want := []string{
		"2 result", "4 result",
		"null error -32700", "null error -32700", "null error -32700",
		"null error -32600", "null error -32600", "null error -32600", "null error -32600",
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}
