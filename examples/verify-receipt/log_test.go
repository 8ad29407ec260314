package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// TestRun_serverReceipt checks a receipt, its proof, two checkpoints and
// a consistency proof served by a run of examples/server (testdata/server:
// go run ./examples/server -signing-key keys.json -trusted-keys
// trusted.json -log-origin example.com/vouch/receipts, one trust call with
// an inline receipt, then GET /api/v4/log, two more calls, the receipt,
// its proof, /api/v4/log again and /api/v4/log/consistency?first=1&second=3).
func TestRun_serverReceipt(t *testing.T) {
	dir := "testdata/server"
	f := func(name string) string { return filepath.Join(dir, name) }
	tmp := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(f(name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	other, _ := receipt.KeyFileFromPrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32)))
	otherKeys := write("other.json", other.Public().Marshal())
	proof := read("proof.json")
	tamperedProof := write("proof-index.json", bytes.Replace(proof, []byte(`"log_index":0`), []byte(`"log_index":1`), 1))
	flippedProof := write("proof-hash.json", flipFirstHash(t, proof))
	forgedCheckpoint := write("proof-cp.json", bytes.Replace(proof, []byte(`\n3\n`), []byte(`\n4\n`), 1))
	changedReceipt := write("receipt.json", bytes.Replace(read("receipt.json"), []byte(`"VALID"`), []byte(`"INVALID"`), 1))
	// The receipt as an editor saves it (a final newline) and as jq
	// prints it (indented): other spellings of the bytes in the log.
	savedReceipt := write("receipt-saved.json", append(read("receipt.json"), '\n'))
	var indented bytes.Buffer
	if err := json.Indent(&indented, read("receipt.json"), "", "  "); err != nil {
		t.Fatal(err)
	}
	indentedReceipt := write("receipt-indented.json", indented.Bytes())

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"receipt and proof", []string{"-keys", f("trusted.json"), "-allow-expired", f("receipt.json"), "-proof", f("proof.json")}, 0,
			[]string{"signature   passed", "key_window  passed", "checkpoint  passed: example.com/vouch/receipts, tree size 3", "inclusion   passed: leaf 0 of 3", "VALID"}},
		{"the log only grew", []string{"-keys", f("trusted.json"), "-old", f("log1.json"), "-new", f("log3.json"), "-consistency", f("consistency.json")}, 0,
			[]string{"old checkpoint passed", "new checkpoint passed", "consistency passed", "VALID"}},
		{"checkpoints swapped: shrunk", []string{"-keys", f("trusted.json"), "-old", f("log3.json"), "-new", f("log1.json"), "-consistency", f("consistency.json")}, 1,
			[]string{"consistency failed", "shrank", "INVALID"}},
		{"another log origin", []string{"-keys", f("trusted.json"), "-log-origin", "example.org/other", "-allow-expired", f("receipt.json"), "-proof", f("proof.json")}, 1,
			[]string{"checkpoint  failed", "inclusion   skipped", "INVALID"}},
		{"untrusted keys", []string{"-keys", otherKeys, "-allow-expired", f("receipt.json"), "-proof", f("proof.json")}, 1,
			[]string{"signature   failed", "checkpoint  failed", "INVALID"}},
		{"wrong index", []string{"-keys", f("trusted.json"), "-allow-expired", f("receipt.json"), "-proof", tamperedProof}, 1,
			[]string{"inclusion   failed", "INVALID"}},
		{"changed proof", []string{"-keys", f("trusted.json"), "-allow-expired", f("receipt.json"), "-proof", flippedProof}, 1,
			[]string{"inclusion   failed", "INVALID"}},
		{"edited checkpoint", []string{"-keys", f("trusted.json"), "-allow-expired", f("receipt.json"), "-proof", forgedCheckpoint}, 1,
			[]string{"checkpoint  failed", "INVALID"}},
		{"changed receipt", []string{"-keys", f("trusted.json"), "-allow-expired", changedReceipt, "-proof", f("proof.json")}, 1,
			[]string{"signature   failed", "inclusion   failed", "INVALID"}},
		{"receipt saved with a final newline", []string{"-keys", f("trusted.json"), "-allow-expired", savedReceipt, "-proof", f("proof.json")}, 0,
			[]string{"signature   passed", "inclusion   passed: leaf 0 of 3", "VALID"}},
		{"receipt indented", []string{"-keys", f("trusted.json"), "-allow-expired", indentedReceipt, "-proof", f("proof.json")}, 0,
			[]string{"signature   passed", "inclusion   passed: leaf 0 of 3", "VALID"}},
		// The receipt was issued 2026-11-23T20:20:25Z and kept until 2026-12-23.
		{"as of a day in its life", []string{"-keys", f("trusted.json"), "-at", "2026-12-01T00:00:00Z", f("receipt.json"), "-proof", f("proof.json")}, 0,
			[]string{"key_window  passed", "expiry      passed: valid until 2026-12-23T20:20:25.929Z", "VALID"}},
		{"as of a day after its life", []string{"-keys", f("trusted.json"), "-at", "2027-01-01T00:00:00Z", f("receipt.json")}, 1,
			[]string{"expiry      failed", "INVALID"}},
		{"as of a day before it was issued", []string{"-keys", f("trusted.json"), "-at", "2026-11-22T00:00:00Z", f("receipt.json")}, 1,
			[]string{"key_window  failed", "later than the verifier's clock", "INVALID"}},
		{"-at not a time", []string{"-keys", f("trusted.json"), "-at", "yesterday", f("receipt.json")}, 2, nil},
		{"consistency without -new", []string{"-keys", f("trusted.json"), "-old", f("log1.json"), "-consistency", f("consistency.json")}, 2, nil},
		{"not a proof", []string{"-keys", f("trusted.json"), f("receipt.json"), "-proof", f("log1.json")}, 2, nil},
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

// flipFirstHash changes the first character of the first hash of a
// proof's inclusion_proof, so that the proof no longer leads to the root.
func flipFirstHash(t *testing.T, proof []byte) []byte {
	t.Helper()
	marker := []byte(`"inclusion_proof":["`)
	i := bytes.Index(proof, marker)
	if i < 0 || i+len(marker) >= len(proof) {
		t.Fatalf("proof has no inclusion_proof hash: %s", proof)
	}
	out := bytes.Clone(proof)
	if c := &out[i+len(marker)]; *c == 'A' {
		*c = 'B'
	} else {
		*c = 'A'
	}
	return out
}

// TestRun_expiredNamesTheFlag checks that an expired receipt's failure
// names the flag that accepts it, not a Go option.
func TestRun_expiredNamesTheFlag(t *testing.T) {
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-400 * 24 * time.Hour)
	is := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}, Now: func() time.Time { return long }}
	issued, err := is.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: "inline"}, Mode: "delegation", Status: "VALID", Confidence: 1, Owner: "o",
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, issued.JSON, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-key", signer.Issuer(), path}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), "expiry      failed") || !strings.Contains(stdout.String(), "-allow-expired") || strings.Contains(stdout.String(), "Unsafe") {
		t.Errorf("exit %d, output:\n%s\nwant a failed expiry naming -allow-expired", code, &stdout)
	}
	stdout.Reset()
	if code := run([]string{"-key", signer.Issuer(), "-allow-expired", path}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "accepted by -allow-expired") || strings.Contains(stdout.String(), "Unsafe") {
		t.Errorf("exit %d, output:\n%s\nwant expiry skipped, accepted by -allow-expired", code, &stdout)
	}
}

func FuzzParseProof(f *testing.F) {
	if b, err := os.ReadFile("testdata/server/proof.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"log_index":0,"tree_size":1,"inclusion_proof":[],"checkpoint":"x"}`))
	f.Add([]byte(`{"log_index":-1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parseProof(body)
		if err != nil {
			return
		}
		if p.LogIndex < 0 || p.TreeSize <= p.LogIndex || p.Checkpoint == "" {
			t.Fatalf("parseProof accepted %+v", p)
		}
	})
}
