package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

// TestRun_whatIsMissing: an incomplete or excessive command line is
// reported in one line that names the flag or argument at fault, before
// the usage text, with exit 2.
func TestRun_whatIsMissing(t *testing.T) {
	const key = "ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	const rcpt = "../../receipt/testdata/golden/signed.json"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-key", key}, "verify-receipt: no receipt file given"},
		{[]string{"-key", key, rcpt, rcpt}, "verify-receipt: one receipt file at a time, got 2: " + rcpt + " " + rcpt},
		{[]string{rcpt}, "verify-receipt: no trusted key: give -key KEY or -keys FILE"},
		{[]string{"-key", key, "-old", "a", "-new", "b"}, "verify-receipt: -consistency is required with -old and -new"},
		{[]string{"-key", key, "-consistency", "c"}, "verify-receipt: -old and -new are required with -consistency"},
		{[]string{"-key", key, "-old", "a", "-new", "b", "-consistency", "c", rcpt},
			"verify-receipt: -old, -new and -consistency check the log's growth and take no receipt file, got " + rcpt},
		{[]string{"-key", key, "-old", "a", "-new", "b", "-consistency", "c", "-proof", "p"},
			"verify-receipt: -proof applies to a receipt, not to -old, -new and -consistency"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		if code != 2 || first != tc.want || !strings.HasPrefix(rest, "usage: ") {
			t.Errorf("run %q: exit %d, stderr:\n%s\nwant exit 2, %q, then the usage text", tc.args, code, &stderr, tc.want)
		}
	}
}

// TestRun_keyReadErrors: a key or key file that cannot be read is
// reported under the flag that named it.
func TestRun_keyReadErrors(t *testing.T) {
	const rcpt = "../../receipt/testdata/golden/signed.json"
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-key", dir, rcpt}, "-key " + dir + ": read " + dir + ": is a directory"},
		{[]string{"-keys", dir, rcpt}, "-keys " + dir + ": "},
		{[]string{"-keys", filepath.Join(dir, "none.json"), rcpt}, "-keys " + filepath.Join(dir, "none.json") + ": "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), tc.want) {
			t.Errorf("run %q: exit %d, stderr %q; want exit 2 and a line starting %q", tc.args, code, &stderr, tc.want)
		}
	}
}

// TestRun_textFinalNewline: -output-text and -input-text hash the whole
// file. A file that differs from the original by its final newline alone
// (as echo writes it) fails, and the failure says that this is the
// difference; any other mismatch says that the whole content counts.
func TestRun_textFinalNewline(t *testing.T) {
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	is := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}
	issued, err := is.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: "inline", Include: receipt.Include{InputHash: true, OutputHash: true}},
		Mode:    "delegation", Status: "VALID", Confidence: 1, Owner: "o",
		Input: "Translate: bonjour", Output: "hello",
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rcpt := write("receipt.json", string(issued.JSON))
	for _, tc := range []struct {
		flag, content, want string
		code                int
	}{
		{"-output-text", "hello", "output_hash passed", 0},
		{"-output-text", "hello\n", "output_hash failed: receipt: hash does not match: the original hashes to sha256:", 1},
		{"-output-text", "hello\n", "; -output-text hashes the whole file, and without its final newline it matches: write it without one (printf '%s', not echo)\n", 1},
		{"-output-text", "goodbye\n", "; -output-text hashes the file's whole content, a final newline included\n", 1},
		{"-input-text", "Translate: bonjour\r\n", "; -input-text hashes the whole file, and without its final newline it matches", 1},
	} {
		file := write("original.txt", tc.content)
		var stdout, stderr bytes.Buffer
		code := run([]string{"-key", signer.Issuer(), tc.flag, file, rcpt}, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%s holding %q: exit %d, stdout:\n%s\nwant exit %d and %q", tc.flag, tc.content, code, &stdout, tc.code, tc.want)
		}
	}

	var stderr bytes.Buffer
	run([]string{"-h"}, &bytes.Buffer{}, &stderr)
	if n := strings.Count(stderr.String(), "whole content, a final newline included"); n != 2 {
		t.Errorf("-h says %d times that the whole content counts, a final newline included; want 2 (-input-text, -output-text):\n%s", n, &stderr)
	}
}
