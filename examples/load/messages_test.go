package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseFlags_messages: each bad value is reported under its own flag,
// with the rule it breaks; -settle may be 0.
func TestParseFlags_messages(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" for accepted
	}{
		{[]string{"-url", "ftp://x"}, `-url "ftp://x": want an absolute http or https URL`},
		{[]string{"-debug-url", "ftp://x"}, `-debug-url "ftp://x": want an absolute http or https URL`},
		{[]string{"-debug-url", "127.0.0.1:8081/debug/vars"}, `-debug-url "127.0.0.1:8081/debug/vars": want an absolute http or https URL`},
		{[]string{"-url", ""}, "-url is required"},
		{[]string{"-duration", "0s"}, "-duration 0s: want a positive duration"},
		{[]string{"-duration", "-1s"}, "-duration -1s: want a positive duration"},
		{[]string{"-settle", "-1s"}, "-settle -1s: want a duration of 0 or more"},
		{[]string{"-settle", "0s"}, ""},
		{[]string{"-progress", "0s"}, "-progress 0s: want a positive duration"},
	}
	var got, want []string
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		got = append(got, strings.Join(tt.args, " ")+" → "+msg)
		want = append(want, strings.Join(tt.args, " ")+" → "+tt.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseFlags messages (-want +got):\n%s", diff)
	}
}

// TestRun_transportErrorCause: against a port where nothing listens, the
// summary's errors by kind give the first error of each kind, so that
// "transport error" comes with its cause.
func TestRun_transportErrorCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: each call is refused
	cfg, err := parseFlags([]string{"-url", "http://" + addr, "-debug-url", "", "-calls", "3", "-concurrency", "1", "-mix", "trial_v2=1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s.write(&out)
	_, after, ok := strings.Cut(out.String(), "errors by kind:\n  transport error")
	_, after, _ = strings.Cut(after, "\n") // the rest of the count's line
	first, _, _ := strings.Cut(after, "\n")
	if !ok || !strings.HasPrefix(first, "    first: ") || !strings.Contains(first, addr) || !strings.Contains(first, "connection refused") {
		t.Errorf("the transport errors come without their first cause:\n%s", &out)
	}
}
