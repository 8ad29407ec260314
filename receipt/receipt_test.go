package receipt_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

func TestParse(t *testing.T) {
	is, _ := newIssuer(t, newSigner(t, 1))
	data := string(issue(t, is, fullParams()).JSON)
	tests := []struct {
		name   string
		data   string
		fields []string // failing paths; nil means Parse succeeds
	}{
		{"issued", data, nil},
		{"empty", ``, []string{"(body)"}},
		{"array", `[]`, []string{"(body)"}},
		{"truncated", data[:len(data)-1], []string{"(body)"}},
		{"trailing data", data + `{}`, []string{"(body)"}},
		{"repeated member", strings.Replace(data, `"ttl":"30d"`, `"ttl":"30d","ttl":"1d"`, 1), []string{"ttl"}},
		{"bad id", strings.Replace(data, `"receipt_id":"rcpt_`, `"receipt_id":"rcpx_`, 1), []string{"receipt_id"}},
		{"bad mode", strings.Replace(data, `"mode":"validation"`, `"mode":"inline"`, 1), []string{"mode"}},
		{"bad status", strings.Replace(data, `"status":"VALID"`, `"status":"valid"`, 1), []string{"decision.status"}},
		{"confidence type", strings.Replace(data, `"confidence":0.9`, `"confidence":"high"`, 1), []string{"decision.confidence"}},
		{"confidence range", strings.Replace(data, `"confidence":0.9`, `"confidence":-0.1`, 1), []string{"decision.confidence"}},
		{"reasons null", strings.Replace(data, `"reasons":["consistent","grounded"]`, `"reasons":null`, 1), []string{"decision.reasons"}},
		{"local time", strings.Replace(data, `:00.000Z"`, `:00.000+02:00"`, 1), []string{"decision.timestamp"}},
		{"bad hash", strings.Replace(data, `"input_hash":"sha256:`, `"input_hash":"md5:`, 1), []string{"task_meta.input_hash"}},
		{"bad ttl", strings.Replace(data, `"ttl":"30d"`, `"ttl":"30 days"`, 1), []string{"ttl"}},
		{"bad visibility", strings.Replace(data, `"visibility":"shared"`, `"visibility":"world"`, 1), []string{"visibility"}},
		{"session as text", strings.Replace(data, `"sessions":[201`, `"sessions":["201"`, 1), []string{"cortensor_refs.sessions[0]"}},
		{"anchor set", strings.Replace(data, `"chain_anchor":null`, `"chain_anchor":"0x1"`, 1), []string{"signing.chain_anchor"}},
		{"replicas 6", strings.Replace(data, `"replicas":3,"strategy":"majority","verdicts"`, `"replicas":6,"strategy":"majority","verdicts"`, 1), []string{"consensus_snapshot.replicas"}},
		{"replicas 0", strings.Replace(data, `"replicas":3,"strategy":"majority","verdicts"`, `"replicas":0,"strategy":"majority","verdicts"`, 1), []string{"consensus_snapshot.replicas"}},
		// Member names are case-sensitive: encoding/json would read
		// "MODE" as mode, a reader matching names exactly would not.
		{"mode spelt MODE", strings.Replace(data, `"mode":"validation"`, `"MODE":"validation"`, 1), []string{"mode"}},
		{"status spelt Status", strings.Replace(data, `"status":"VALID"`, `"Status":"VALID"`, 1), []string{"decision.status"}},
		{"missing members", `{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}`, []string{"mode", "decision.status", "decision.reasons", "decision.timestamp", "ttl", "visibility"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := receipt.Parse([]byte(tc.data))
			if tc.fields == nil {
				if err != nil || r == nil {
					t.Fatalf("Parse = %v, %v; want a receipt", r, err)
				}
				return
			}
			var se *receipt.SchemaError
			if !errors.As(err, &se) || !errors.Is(err, receipt.ErrSchema) || r != nil {
				t.Fatalf("Parse = %v, %v; want nil and a *SchemaError", r, err)
			}
			var got []string
			for _, f := range se.Fields {
				got = append(got, f.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("failing fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReceipt_ExpiresAt(t *testing.T) {
	r := receipt.Receipt{TTL: "7d", Decision: receipt.Decision{Timestamp: "2026-05-01T12:00:00.250Z"}}
	got, err := r.ExpiresAt()
	if want := time.Date(2026, 5, 8, 12, 0, 0, 250e6, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("ExpiresAt = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []receipt.Receipt{
		{TTL: "7d", Decision: receipt.Decision{Timestamp: "yesterday"}},
		{TTL: "7d", Decision: receipt.Decision{Timestamp: "2026-05-01T12:00:00+02:00"}},
		{TTL: "week", Decision: receipt.Decision{Timestamp: "2026-05-01T12:00:00Z"}},
	} {
		if _, err := bad.ExpiresAt(); err == nil {
			t.Errorf("ExpiresAt(%+v) = nil error, want one", bad)
		}
	}
}

// FuzzParse feeds the receipt decoder arbitrary bytes: it must never
// panic, and whatever it accepts must re-encode to a receipt it accepts
// again, unchanged.
func FuzzParse(f *testing.F) {
	is, _ := newIssuer(f, newSigner(f, 1))
	f.Add(issue(f, is, fullParams()).JSON)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa","mode":"delegation","task_meta":{"type":""},` +
		`"decision":{"status":"RETRY","confidence":0,"reasons":[],"timestamp":"2026-01-01T00:00:00Z"},"ttl":"1d","visibility":"private"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := receipt.Parse(data)
		if err != nil {
			if r != nil || !errors.Is(err, receipt.ErrSchema) {
				t.Fatalf("Parse = %v, %v; want nil and ErrSchema", r, err)
			}
			return
		}
		again, err := receipt.Parse(mustMarshal(t, r))
		if err != nil {
			t.Fatalf("re-encoded receipt rejected: %v", err)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Fatalf("round trip changed the receipt (-first +second):\n%s", diff)
		}
	})
}
