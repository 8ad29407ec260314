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

func TestRun(t *testing.T) {
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	is := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}
	issued, err := is.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: "inline", Include: receipt.Include{InputHash: true, OutputHash: true}},
		Mode:    "delegation", Status: "VALID", Confidence: 1, Owner: "o",
		Input: "Translate: bonjour", Output: map[string]string{"text": "hello"},
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
	forged := write("forged.json", strings.Replace(string(issued.JSON), `"VALID"`, `"INVALID"`, 1))
	keyFile := write("key.txt", signer.Issuer()+"\n")
	in := write("input.txt", "Translate: bonjour")
	out := write("output.json", `{ "text": "hello" }`)
	wrongOut := write("wrong.json", `{"text":"goodbye"}`)
	other, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32)))
	kf, _ := receipt.KeyFileFromPrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)))
	trustFile := write("trusted.json", string(kf.Public().Marshal()))
	otherFile, _ := receipt.KeyFileFromPrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32)))
	otherTrust := write("other.json", string(otherFile.Public().Marshal()))

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"valid with originals", []string{"-key", keyFile, rcpt, "-input-text", in, "-output", out}, 0,
			[]string{"signature   passed", "input_hash  passed", "output_hash passed", "VALID"}},
		{"inline key", []string{"-key", signer.Issuer(), rcpt}, 0, []string{"input_hash  skipped", "VALID"}},
		{"forged", []string{"-key", keyFile, forged}, 1, []string{"signature   failed", "INVALID"}},
		{"wrong output", []string{"-key", keyFile, rcpt, "-output", wrongOut}, 1, []string{"output_hash failed", "INVALID"}},
		{"input as JSON text", []string{"-key", keyFile, rcpt, "-input", in}, 2, nil},
		{"untrusted key", []string{"-key", other.Issuer(), rcpt}, 1, []string{"not trusted", "INVALID"}},
		{"no key", []string{rcpt}, 2, nil},
		{"key file", []string{"-keys", trustFile, rcpt}, 0, []string{"key_window  passed", "VALID"}},
		{"key file of another key", []string{"-keys", otherTrust, rcpt}, 1, []string{"not trusted", "INVALID"}},
		{"bad key file", []string{"-keys", in, rcpt}, 2, nil},
		{"bad key", []string{"-key", "zzz", rcpt}, 2, nil},
		{"not JSON", []string{"-key", keyFile, in}, 1, []string{"schema      failed", "INVALID"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, &stdout, &stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, &stdout)
				}
			}
		})
	}
}
