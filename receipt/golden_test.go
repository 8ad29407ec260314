package receipt

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"testing"
	"time"
)

// The golden files pin the canonical form and the signature. They were not
// copied from this package's output: signing-message.json was written by
// hand from RFC 8785's rules (members sorted, no white space), with hashes
// computed by sha256sum over the canonical values; signed.json adds the
// signature made by an independent Ed25519 implementation (Python's
// cryptography package) with the key of RFC 8032, section 7.1, test 1.
const (
	rfc8032Seed   = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	rfc8032Public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
)

func goldenSigner(t testing.TB) *Ed25519Signer {
	t.Helper()
	seed, _ := hex.DecodeString(rfc8032Seed)
	s, err := NewEd25519Signer(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goldenParams is the decision recorded in the golden files.
func goldenParams() Params {
	return Params{
		Request: Request{
			Mode: DeliveryInline,
			Include: Include{
				ConsensusSnapshot: true, PolicySnapshot: true,
				InputHash: true, OutputHash: true, RouterTraceRefs: true,
			},
			TTL: "30d", Visibility: VisibilityShared,
		},
		Mode:       "validation",
		TaskType:   "summary",
		Input:      "What is the capital of France?",
		Output:     map[string]any{"sources": []string{}, "answer": "Paris"},
		Status:     "VALID",
		Confidence: 0.9,
		Reasons:    []string{"consistent", "grounded"},
		Policy:     &PolicySnapshot{Tier: "safe", Consensus: PolicyConsensus{Replicas: 3, Strategy: "majority"}},
		Consensus: &ConsensusSnapshot{
			Replicas: 3, Agreement: 0.67, Verdicts: []string{"VALID", "VALID", "INVALID"},
			Strategy: "majority", Confidence: 0.8,
		},
		Refs: &Refs{
			Sessions:       []int64{201, 202, 203},
			Tasks:          []string{"task-1", "task-2", "task-3"},
			RouterTraceIDs: []string{"4bf92f3577b34da6a3ce929d0e0e4736"},
		},
		Owner: "integration-a",
	}
}

func goldenTime() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden_signingMessage(t *testing.T) {
	p := goldenParams()
	r, err := build("rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa", goldenTime(), Terms{TTLDays: 30, Visibility: VisibilityShared}, &p)
	if err != nil {
		t.Fatal(err)
	}
	s := goldenSigner(t)
	r.Signing = &Signing{Issuer: s.Issuer(), SignatureScheme: s.Scheme()}
	got, err := encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := readGolden(t, "signing-message.json"); !bytes.Equal(got, want) {
		t.Errorf("signing message:\n got %s\nwant %s", got, want)
	}
}

func TestGolden_signed(t *testing.T) {
	p := goldenParams()
	r, err := build("rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa", goldenTime(), Terms{TTLDays: 30, Visibility: VisibilityShared}, &p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sign(context.Background(), goldenSigner(t), r)
	if err != nil {
		t.Fatal(err)
	}
	if want := readGolden(t, "signed.json"); !bytes.Equal(got, want) {
		t.Errorf("signed receipt:\n got %s\nwant %s", got, want)
	}
}

func TestGolden_verifiesWithRFC8032Key(t *testing.T) {
	pub, _ := hex.DecodeString(rfc8032Public)
	v, err := NewVerifier([]PublicKey{Ed25519Key(pub)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Verify(readGolden(t, "signed.json"), Originals{
		Input:  []byte(`"What is the capital of France?"`),
		Output: []byte(`{ "sources": [], "answer": "Paris" }`),
	}, goldenTime().Add(time.Hour))
	if err != nil {
		t.Fatalf("Verify(golden) = %v", err)
	}
	for _, c := range res.Checks {
		if c.Status != CheckPassed {
			t.Errorf("check %s = %s, want passed", c.Name, c.Status)
		}
	}
	// The signing message is what the signature covers.
	signed := readGolden(t, "signed.json")
	r, err := Parse(signed)
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := signingMessage(signed, r.Signing.Signature); err != nil || !bytes.Equal(msg, readGolden(t, "signing-message.json")) {
		t.Errorf("signingMessage(signed.json) = %s, %v; want signing-message.json", msg, err)
	}
}
