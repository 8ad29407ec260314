package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzStdioLine checks lineFault against the SDK's own reading of a
// line of stdin: a line it passes on, the SDK reads as a message (or a
// batch of them); a line it refuses, which it answers with the JSON-RPC
// error instead, the SDK would fail to read, and so end its session.
func FuzzStdioLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{bad`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {}`,
		"\xff\xfe",
		`5`,
		`[]`,
		`{}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n") || len(bytes.TrimSpace(line)) == 0 {
			return // stdioIn splits lines, and passes blank ones on to no one
		}
		code, msg := lineFault(line)
		if code != 0 && code != jsonrpc.CodeParseError && code != jsonrpc.CodeInvalidRequest || (code == 0) != (msg == "") {
			t.Fatalf("lineFault(%q) = %d, %q", line, code, msg)
		}
		tr := &mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(append(bytes.Clone(line), '\n'))), Writer: nopWriteCloser{}}
		conn, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, err = conn.Read(context.Background())
		if (err == nil) != (code == 0) {
			t.Fatalf("lineFault(%q) = %d %q, but the SDK reads it with error %v", line, code, msg, err)
		}
	})
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
