package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzStdioCalls reads any line a host may write on stdin: noting it
// never panics, and once the SDK has written an answer to each call it
// holds, as one message or as a batch, no call is left open (a call
// left open would hold the end of the input for stdioDrain).
func FuzzStdioCalls(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"1","method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[1, {"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`not json`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, line []byte, batch bool) {
		c := &stdioCalls{open: make(map[jsonrpc.ID]int), answered: make(chan struct{})}
		c.note(line)
		var answers []json.RawMessage
		for id, n := range c.open {
			for range n {
				b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)})
				if err != nil {
					t.Fatalf("%q: encoding the answer to call %v: %v", line, id, err)
				}
				answers = append(answers, b)
			}
		}
		if batch {
			b, _ := json.Marshal(answers)
			c.answer(append(b, '\n'))
		} else {
			for _, a := range answers {
				c.answer(append(bytes.Clone(a), '\n'))
			}
		}
		if len(c.open) != 0 {
			t.Fatalf("%q answered: calls left open %v", line, c.open)
		}
	})
}
