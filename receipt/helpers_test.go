package receipt_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// t0 is the decision time of the test receipts.
func t0() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }

// newSigner returns a signer whose key derives from the seed byte b.
func newSigner(t testing.TB, b byte) *receipt.Ed25519Signer {
	t.Helper()
	s, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newVerifier(t testing.TB, keys []receipt.PublicKey, opts ...receipt.VerifierOption) *receipt.Verifier {
	t.Helper()
	v, err := receipt.NewVerifier(keys, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fullParams asks for every optional member.
func fullParams() receipt.Params {
	return receipt.Params{
		Request: receipt.Request{
			Mode: receipt.DeliveryInline,
			Include: receipt.Include{
				ConsensusSnapshot: true, PolicySnapshot: true,
				InputHash: true, OutputHash: true, RouterTraceRefs: true,
			},
			TTL: "30d", Visibility: receipt.VisibilityShared,
		},
		Mode:       "validation",
		TaskType:   "summary",
		Input:      "What is the capital of France?",
		Output:     json.RawMessage(`{"answer":"Paris"}`),
		Status:     "VALID",
		Confidence: 0.9,
		Reasons:    []string{"consistent", "grounded"},
		Policy:     &receipt.PolicySnapshot{Tier: "safe", Consensus: receipt.PolicyConsensus{Replicas: 3, Strategy: "majority"}},
		Consensus: &receipt.ConsensusSnapshot{
			Replicas: 3, Agreement: 0.67, Verdicts: []string{"VALID", "VALID", "INVALID"},
			Strategy: "majority", Confidence: 0.8,
		},
		Refs: &receipt.Refs{
			Sessions:       []int64{201, 202, 203},
			Tasks:          []string{"task-1", "task-2", "task-3"},
			RouterTraceIDs: []string{"4bf92f3577b34da6a3ce929d0e0e4736"},
		},
		Owner:          "owner-a",
		Counterparties: []string{"party-b"},
	}
}

// newIssuer returns an issuer on a fresh MemStore whose clock reads t0.
func newIssuer(t testing.TB, s receipt.Signer) (*receipt.Issuer, *receipt.MemStore) {
	t.Helper()
	store := &receipt.MemStore{}
	return &receipt.Issuer{Signer: s, Store: store, Now: t0}, store
}

func issue(t testing.TB, is *receipt.Issuer, p receipt.Params) *receipt.Issued {
	t.Helper()
	out, err := is.Issue(context.Background(), p)
	if err != nil {
		t.Fatalf("Issue = %v", err)
	}
	return out
}

// decodeMap decodes JSON into generic values, numbers kept as text.
func decodeMap(t testing.TB, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeJSON encodes v with object members in reverse order of their names,
// and a newline and indent after every member when indent is set: a
// different but equivalent text of the same JSON value.
func writeJSON(buf *bytes.Buffer, v any, indent bool) {
	nl := ""
	if indent {
		nl = "\n  "
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		buf.WriteString("{" + nl)
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" ," + nl)
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" : ")
			writeJSON(buf, v[k], indent)
		}
		buf.WriteString(nl + "}")
	case []any:
		buf.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeJSON(buf, e, indent)
		}
		buf.WriteString(" ]")
	default:
		b, _ := json.Marshal(v)
		buf.Write(b)
	}
}

func reencode(v any, indent bool) []byte {
	var buf bytes.Buffer
	writeJSON(&buf, v, indent)
	return buf.Bytes()
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leaf is one scalar of a JSON document and the path to it.
type leaf struct {
	path []any // string keys and int indexes
	val  any
}

func (l leaf) String() string { return fmt.Sprint(l.path...) }

// leaves lists every scalar in v, depth first.
func leaves(v any, path []any) []leaf {
	switch v := v.(type) {
	case map[string]any:
		var out []leaf
		for k, e := range v {
			out = append(out, leaves(e, append(slices.Clone(path), "."+k))...)
		}
		return out
	case []any:
		var out []leaf
		for i, e := range v {
			out = append(out, leaves(e, append(slices.Clone(path), i))...)
		}
		return out
	}
	return []leaf{{path: path, val: v}}
}

// set replaces the value at path in doc.
func set(doc any, path []any, val any) {
	for i, p := range path {
		last := i == len(path)-1
		switch p := p.(type) {
		case string:
			m := doc.(map[string]any)
			if last {
				m[p[1:]] = val
				return
			}
			doc = m[p[1:]]
		case int:
			a := doc.([]any)
			if last {
				a[p] = val
				return
			}
			doc = a[p]
		}
	}
}
