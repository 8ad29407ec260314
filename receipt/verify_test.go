package receipt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// signatureErrors are the failures a tampered but well-formed receipt may
// show: its bytes changed, or its key or scheme was swapped.
var signatureErrors = []error{receipt.ErrBadSignature, receipt.ErrUnknownKey, receipt.ErrUnsupportedScheme}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// TestVerify_tamperEveryLeaf changes each scalar of a signed receipt, one
// at a time, and expects verification to fail: by the schema when the new
// value breaks a rule, and otherwise by the signature.
func TestVerify_tamperEveryLeaf(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	data := issue(t, is, fullParams()).JSON
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	now := t0().Add(time.Hour)

	all := leaves(decodeMap(t, data), nil)
	if len(all) < 30 {
		t.Fatalf("found %d leaves in the receipt; the walk is broken", len(all))
	}
	for _, l := range all {
		for _, changed := range alternatives(l.val) {
			t.Run(fmt.Sprintf("%v=%v", l, changed), func(t *testing.T) {
				doc := decodeMap(t, data)
				set(doc, l.path, changed)
				res, err := v.Verify(mustMarshal(t, doc), receipt.Originals{}, now)
				if err == nil {
					t.Fatalf("Verify accepted the receipt with %v changed from %v to %v", l, l.val, changed)
				}
				if schema, _ := res.Check(receipt.CheckSchema); schema.Status == receipt.CheckPassed && !isAny(err, signatureErrors...) {
					t.Errorf("schema passed, so the signature should fail; got %v", err)
				}
			})
		}
	}
}

// alternatives returns other values for a scalar: a nearby one that keeps
// most schema rules, and one of another JSON type.
func alternatives(v any) []any {
	switch v := v.(type) {
	case string:
		if v == "" {
			return []any{"x", 0}
		}
		// Change the last character to another of the same class, so that
		// hashes, ids and signatures stay well formed.
		last := v[len(v)-1]
		repl := byte('a')
		switch {
		case last >= '0' && last <= '8':
			repl = last + 1
		case last == '9':
			repl = '0'
		case last >= 'a' && last < 'z':
			repl = last + 1
		case last >= 'A' && last < 'Z':
			repl = last + 1
		}
		return []any{v[:len(v)-1] + string(repl), nil}
	case json.Number:
		f, _ := v.Float64()
		if f > 0 && f < 1 {
			return []any{json.Number(fmt.Sprint(f / 2)), "x"}
		}
		return []any{json.Number(fmt.Sprint(f + 2)), "x"}
	case nil:
		return []any{"anchored", map[string]any{}}
	case bool:
		return []any{!v}
	}
	return []any{"?"}
}

func TestVerify_tamper(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	data := issue(t, is, fullParams()).JSON
	other := issue(t, is, fullParams()).JSON // the same decision, another id
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	now := t0().Add(time.Hour)

	tests := []struct {
		name   string
		mutate func(doc map[string]any)
		want   []error
	}{
		{"status VALID to INVALID", func(d map[string]any) { dig(d, "decision")["status"] = "INVALID" }, signatureErrors},
		{"confidence 0.9 to 0.91", func(d map[string]any) { dig(d, "decision")["confidence"] = json.Number("0.91") }, signatureErrors},
		{"swap input and output hash", func(d map[string]any) {
			m := dig(d, "task_meta")
			m["input_hash"], m["output_hash"] = m["output_hash"], m["input_hash"]
		}, signatureErrors},
		{"reorder reasons", func(d map[string]any) {
			r := dig(d, "decision")["reasons"].([]any)
			r[0], r[1] = r[1], r[0]
		}, signatureErrors},
		{"reorder verdicts", func(d map[string]any) {
			r := dig(d, "consensus_snapshot")["verdicts"].([]any)
			r[0], r[2] = r[2], r[0]
		}, signatureErrors},
		{"reorder sessions", func(d map[string]any) {
			r := dig(d, "cortensor_refs")["sessions"].([]any)
			r[0], r[1] = r[1], r[0]
		}, signatureErrors},
		{"drop a reason", func(d map[string]any) { dig(d, "decision")["reasons"] = []any{"consistent"} }, signatureErrors},
		{"remove consensus_snapshot", func(d map[string]any) { delete(d, "consensus_snapshot") }, signatureErrors},
		{"remove output_hash", func(d map[string]any) { delete(dig(d, "task_meta"), "output_hash") }, signatureErrors},
		{"add an unknown member", func(d map[string]any) { d["note"] = "paid" }, signatureErrors},
		{"add low_confidence", func(d map[string]any) { dig(d, "consensus_snapshot")["low_confidence"] = true }, signatureErrors},
		{"longer ttl", func(d map[string]any) { d["ttl"] = "90d" }, signatureErrors},
		{"wider visibility", func(d map[string]any) { d["visibility"] = "public" }, signatureErrors},
		{"signature of another receipt", func(d map[string]any) {
			dig(d, "signing")["signature"] = dig(decodeMap(t, other), "signing")["signature"]
		}, signatureErrors},
		{"id of another receipt", func(d map[string]any) { d["receipt_id"] = decodeMap(t, other)["receipt_id"] }, signatureErrors},
		{"another issuer", func(d map[string]any) { dig(d, "signing")["issuer"] = newSigner(t, 2).Issuer() }, []error{receipt.ErrUnknownKey}},
		{"another scheme", func(d map[string]any) { dig(d, "signing")["signature_scheme"] = "ed25519" }, []error{receipt.ErrUnsupportedScheme}},
		{"signature not base64url", func(d map[string]any) { dig(d, "signing")["signature"] = "!!" }, []error{receipt.ErrBadSignature}},
		{"signature removed", func(d map[string]any) { delete(d, "signing") }, []error{receipt.ErrUnsigned}},
		{"chain anchor set", func(d map[string]any) { dig(d, "signing")["chain_anchor"] = "0xabc" }, []error{receipt.ErrSchema}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := decodeMap(t, data)
			tc.mutate(doc)
			_, err := v.Verify(mustMarshal(t, doc), receipt.Originals{}, now)
			if !isAny(err, tc.want...) {
				t.Errorf("Verify = %v, want one of %v", err, tc.want)
			}
		})
	}
}

func dig(doc map[string]any, key string) map[string]any { return doc[key].(map[string]any) }

// TestVerify_otherSpellings re-encodes a signed receipt as other text of
// the same JSON value, as JSON libraries write it: each verifies, checked
// in its canonical form, with AsIssued false; the text as issued has
// AsIssued true.
func TestVerify_otherSpellings(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	data := issue(t, is, fullParams()).JSON
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	doc := decodeMap(t, data)
	quoted, _ := json.Marshal(string(data))

	tests := map[string]struct {
		text     []byte
		asIssued bool
	}{
		"as issued":                {data, true},
		"a string holding it":      {quoted, true},
		"members reversed":         {reencode(doc, false), false},
		"members reversed, indent": {reencode(doc, true), false},
		"escaped characters":       {[]byte(strings.Replace(string(data), `"VALID"`, `"\u0056ALID"`, 1)), false},
		"numbers respelled":        {[]byte(strings.Replace(string(data), `"confidence":0.9`, `"confidence":9.0e-1`, 1)), false},
		"integer respelled":        {[]byte(strings.Replace(string(data), `"replicas":3`, `"replicas":3.0`, 1)), false},
		"surrounding white space":  {[]byte("\n\t " + string(data) + " \r\n"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := v.Verify(tc.text, receipt.Originals{}, t0())
			if err != nil || !res.Valid() || res.AsIssued != tc.asIssued {
				t.Errorf("Verify(%s) = %v, valid %v, as issued %v; want valid, as issued %v", tc.text, err, res.Valid(), res.AsIssued, tc.asIssued)
			}
		})
	}
}

// TestVerify_integerBeyondFloat is the regression test of a session id
// above 2^53: canonical form writes it rounded to a float64, so an id
// edited to another integer with the same rounding used to verify once
// re-canonicalized. The Issuer refuses such ids, and a text carrying one
// is not canonical, so it fails the schema check.
func TestVerify_integerBeyondFloat(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	p := fullParams()
	p.Refs.Sessions = []int64{1 << 53}
	data := issue(t, is, p).JSON
	if !bytes.Contains(data, []byte(`"sessions":[9007199254740992]`)) {
		t.Fatalf("issued %s, want session 9007199254740992 written exactly", data)
	}
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	if _, err := v.Verify(data, receipt.Originals{}, t0()); err != nil {
		t.Fatalf("Verify(as issued) = %v", err)
	}
	edited := bytes.Replace(data, []byte("9007199254740992"), []byte("9007199254740993"), 1)
	res, err := v.Verify(edited, receipt.Originals{}, t0())
	c, _ := res.Check(receipt.CheckSchema)
	if !errors.Is(err, receipt.ErrSchema) || res.Valid() || len(c.Errors) != 1 || c.Errors[0].Rule != "number" ||
		c.Errors[0].Field != "cortensor_refs.sessions[0]" {
		t.Errorf("Verify(session id edited to 2^53+1) = %v, %+v; want ErrSchema, rule number on cortensor_refs.sessions[0]", err, c.Errors)
	}

	for _, id := range []int64{1<<53 + 1, -(1<<53 + 1), 1<<62 + 3} {
		p.Refs.Sessions = []int64{201, id}
		if _, err := is.Issue(context.Background(), p); err == nil || !strings.Contains(err.Error(), "cortensor_refs.sessions[1]") {
			t.Errorf("Issue(session %d) = %v, want an error naming cortensor_refs.sessions[1]", id, err)
		}
	}
}

func TestVerify_repeatedMember(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	data := issue(t, is, fullParams()).JSON
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	// A second "status" after the signed one: encoding/json would keep
	// the last, another reader the first.
	text := strings.Replace(string(data), `"status":"VALID"`, `"status":"VALID","status":"INVALID"`, 1)
	if _, err := v.Verify([]byte(text), receipt.Originals{}, t0()); !errors.Is(err, receipt.ErrSchema) {
		t.Errorf("Verify(repeated member) = %v, want ErrSchema", err)
	}
}

func TestVerify_checks(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	issued := issue(t, is, fullParams())
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	expires := t0().Add(30 * 24 * time.Hour)

	type want struct {
		status map[receipt.CheckName]receipt.CheckStatus
		errs   []error
	}
	passedAll := map[receipt.CheckName]receipt.CheckStatus{
		"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "passed", "output_hash": "passed", "expiry": "passed",
	}
	tests := []struct {
		name string
		data []byte
		orig receipt.Originals
		now  time.Time
		want want
	}{
		{"all pass", issued.JSON, receipt.Originals{Input: json.RawMessage(`"What is the capital of France?"`), Output: json.RawMessage(`{ "answer" : "Paris" }`)},
			t0(), want{status: passedAll}},
		{"no originals", issued.JSON, receipt.Originals{}, t0(), want{status: map[receipt.CheckName]receipt.CheckStatus{
			"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "skipped", "output_hash": "skipped", "expiry": "passed"}}},
		{"wrong input", issued.JSON, receipt.Originals{Input: json.RawMessage(`"What is the capital of Spain?"`)}, t0(), want{
			status: map[receipt.CheckName]receipt.CheckStatus{"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "failed", "output_hash": "skipped", "expiry": "passed"},
			errs:   []error{receipt.ErrHashMismatch}}},
		{"input as unquoted text", issued.JSON, receipt.Originals{Input: json.RawMessage(`What is the capital of France?`)}, t0(), want{
			status: map[receipt.CheckName]receipt.CheckStatus{"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "failed", "output_hash": "skipped", "expiry": "passed"},
			errs:   []error{receipt.ErrHashMismatch}}},
		{"null output", issued.JSON, receipt.Originals{Output: json.RawMessage(`null`)}, t0(), want{
			status: map[receipt.CheckName]receipt.CheckStatus{"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "skipped", "output_hash": "failed", "expiry": "passed"},
			errs:   []error{receipt.ErrHashMismatch}}},
		{"one millisecond before expiry", issued.JSON, receipt.Originals{}, expires.Add(-time.Millisecond), want{status: map[receipt.CheckName]receipt.CheckStatus{
			"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "skipped", "output_hash": "skipped", "expiry": "passed"}}},
		{"at expiry", issued.JSON, receipt.Originals{}, expires, want{
			status: map[receipt.CheckName]receipt.CheckStatus{"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "skipped", "output_hash": "skipped", "expiry": "failed"},
			errs:   []error{receipt.ErrExpired}}},
		{"expired and wrong output", issued.JSON, receipt.Originals{Output: json.RawMessage(`{}`)}, expires.Add(time.Hour), want{
			status: map[receipt.CheckName]receipt.CheckStatus{"schema": "passed", "signature": "passed", "key_window": "passed", "input_hash": "skipped", "output_hash": "failed", "expiry": "failed"},
			errs:   []error{receipt.ErrExpired, receipt.ErrHashMismatch}}},
		{"not JSON", []byte(`{"receipt_id":`), receipt.Originals{}, t0(), want{
			status: map[receipt.CheckName]receipt.CheckStatus{"schema": "failed", "signature": "skipped", "key_window": "skipped", "input_hash": "skipped", "output_hash": "skipped", "expiry": "skipped"},
			errs:   []error{receipt.ErrSchema}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := v.Verify(tc.data, tc.orig, tc.now)
			got := map[receipt.CheckName]receipt.CheckStatus{}
			var names []receipt.CheckName
			for _, c := range res.Checks {
				got[c.Name] = c.Status
				names = append(names, c.Name)
				if (c.Status == receipt.CheckFailed) != (c.Err != nil) || (c.Status == receipt.CheckFailed) != (c.Code != "") {
					t.Errorf("check %s: status %s with Err %v and Code %q", c.Name, c.Status, c.Err, c.Code)
				}
			}
			if diff := cmp.Diff([]receipt.CheckName{"schema", "signature", "key_window", "input_hash", "output_hash", "expiry"}, names); diff != "" {
				t.Errorf("check order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.status, got); diff != "" {
				t.Errorf("check outcomes (-want +got):\n%s", diff)
			}
			if (err == nil) != (len(tc.want.errs) == 0) || res.Valid() != (err == nil) {
				t.Errorf("Verify error = %v, Valid = %v; want errors %v", err, res.Valid(), tc.want.errs)
			}
			for _, w := range tc.want.errs {
				if !errors.Is(err, w) {
					t.Errorf("Verify error = %v, want it to wrap %v", err, w)
				}
			}
		})
	}
}

func TestVerify_result(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	issued := issue(t, is, fullParams())
	res, err := newVerifier(t, []receipt.PublicKey{s.Public()}).Verify(issued.JSON, receipt.Originals{}, t0())
	if err != nil {
		t.Fatal(err)
	}
	if res.ReceiptID != issued.Receipt.ReceiptID || res.Issuer != s.Issuer() || res.Scheme != receipt.SchemeEd25519 ||
		!res.ExpiresAt.Equal(t0().Add(30*24*time.Hour)) {
		t.Errorf("Result = {%s %s %s %v}, want {%s %s %s %v}", res.ReceiptID, res.Issuer, res.Scheme, res.ExpiresAt,
			issued.Receipt.ReceiptID, s.Issuer(), receipt.SchemeEd25519, t0().Add(30*24*time.Hour))
	}
	if diff := cmp.Diff(issued.Receipt, res.Receipt); diff != "" {
		t.Errorf("decoded receipt differs from the issued one (-issued +decoded):\n%s", diff)
	}
}

func TestVerify_keyRotation(t *testing.T) {
	oldKey, newKey, stranger := newSigner(t, 1), newSigner(t, 2), newSigner(t, 3)
	v := newVerifier(t, []receipt.PublicKey{oldKey.Public(), newKey.Public()})
	for _, tc := range []struct {
		signer *receipt.Ed25519Signer
		want   error
	}{{oldKey, nil}, {newKey, nil}, {stranger, receipt.ErrUnknownKey}} {
		is, _ := newIssuer(t, tc.signer)
		_, err := v.Verify(issue(t, is, fullParams()).JSON, receipt.Originals{}, t0())
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("receipt signed by %s: Verify = %v, want %v", tc.signer.Issuer(), err, tc.want)
		}
	}
}

func TestVerify_unsafeOptions(t *testing.T) {
	s := newSigner(t, 1)
	unsignedIssuer, _ := newIssuer(t, nil)
	unsigned := issue(t, unsignedIssuer, fullParams()).JSON
	signedIssuer, _ := newIssuer(t, s)
	signed := issue(t, signedIssuer, fullParams()).JSON
	late := t0().Add(31 * 24 * time.Hour)

	strict := newVerifier(t, []receipt.PublicKey{s.Public()})
	if _, err := strict.Verify(unsigned, receipt.Originals{}, t0()); !errors.Is(err, receipt.ErrUnsigned) {
		t.Errorf("strict Verify(unsigned) = %v, want ErrUnsigned", err)
	}
	if _, err := strict.Verify(signed, receipt.Originals{}, late); !errors.Is(err, receipt.ErrExpired) {
		t.Errorf("strict Verify(expired) = %v, want ErrExpired", err)
	}

	lax := newVerifier(t, []receipt.PublicKey{s.Public()}, receipt.WithUnsignedUnsafe(), receipt.WithExpiredUnsafe())
	for name, data := range map[string][]byte{"unsigned": unsigned, "signed": signed} {
		res, err := lax.Verify(data, receipt.Originals{}, late)
		if err != nil {
			t.Errorf("lax Verify(%s, expired) = %v, want nil", name, err)
			continue
		}
		if c, _ := res.Check(receipt.CheckExpiry); c.Status != receipt.CheckSkipped {
			t.Errorf("lax Verify(%s): expiry check %s, want skipped", name, c.Status)
		}
	}
	// Accepting unsigned receipts does not weaken the check of signed ones.
	doc := decodeMap(t, signed)
	dig(doc, "decision")["status"] = "INVALID"
	if _, err := lax.Verify(mustMarshal(t, doc), receipt.Originals{}, t0()); !errors.Is(err, receipt.ErrBadSignature) {
		t.Errorf("lax Verify(tampered signed) = %v, want ErrBadSignature", err)
	}

	onlyUnsigned := newVerifier(t, nil, receipt.WithUnsignedUnsafe())
	if _, err := onlyUnsigned.Verify(signed, receipt.Originals{}, t0()); !errors.Is(err, receipt.ErrUnknownKey) {
		t.Errorf("keyless Verify(signed) = %v, want ErrUnknownKey", err)
	}
}

func TestNewVerifier_rejects(t *testing.T) {
	good := newSigner(t, 1).Public()
	tests := map[string][]receipt.PublicKey{
		"no keys":        nil,
		"nil key":        {good, nil},
		"short key":      {receipt.Ed25519Key(good[:31])},
		"duplicate key":  {good, receipt.Ed25519Key(append([]byte(nil), good...))},
		"empty issuer":   {fakeKey{scheme: "x"}},
		"empty scheme":   {fakeKey{issuer: "x"}},
		"empty Ed25519":  {receipt.Ed25519Key(nil)},
		"one bad of two": {good, receipt.Ed25519Key(make([]byte, 33))},
	}
	for name, keys := range tests {
		if v, err := receipt.NewVerifier(keys); err == nil || v != nil {
			t.Errorf("NewVerifier(%s) = %v, %v; want nil and an error", name, v, err)
		}
	}
}

type fakeKey struct{ issuer, scheme string }

func (k fakeKey) Issuer() string                   { return k.issuer }
func (k fakeKey) Scheme() string                   { return k.scheme }
func (k fakeKey) VerifySignature(_, _ []byte) bool { return true }

// TestCheck_names: a check's name and status are typed values of one
// pattern (Check + what it names) whose wire spellings are those of the
// verify_receipt response; the former status names still compile and
// mean the same.
func TestCheck_names(t *testing.T) {
	got, err := json.Marshal([]receipt.Check{
		{Name: receipt.CheckSchema, Status: receipt.CheckPassed},
		{Name: receipt.CheckExpiry, Status: receipt.CheckFailed, Code: "expired"},
		{Name: receipt.CheckInputHash, Status: receipt.CheckSkipped},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"schema","status":"passed"},{"name":"expiry","status":"failed","code":"expired"},{"name":"input_hash","status":"skipped"}]`
	if string(got) != want {
		t.Errorf("checks as JSON:\n got %s\nwant %s", got, want)
	}
	if receipt.StatusPassed != receipt.CheckPassed || receipt.StatusFailed != receipt.CheckFailed || receipt.StatusSkipped != receipt.CheckSkipped {
		t.Error("a deprecated status name differs from its replacement")
	}
}

// TestVerify_agreement: decision.agreement is signed with the rest of the
// decision: a receipt that states it verifies and reads it back, an edit
// of it fails the signature, and one without it (as issued before it
// existed) leaves it out of the JSON.
func TestVerify_agreement(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	p := fullParams()
	p.Agreement = &receipt.Agreement{Share: 0.75, Replicas: 4, Spent: 4}
	issued := issue(t, is, p)
	if !strings.Contains(string(issued.JSON), `"agreement":{"replicas":4,"share":0.75,"spent":4}`) {
		t.Errorf("receipt JSON without decision.agreement: %s", issued.JSON)
	}
	res, err := v.Verify(issued.JSON, receipt.Originals{}, t0())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if diff := cmp.Diff(p.Agreement, res.Receipt.Decision.Agreement); diff != "" {
		t.Errorf("decision.agreement read back (-want +got):\n%s", diff)
	}
	edited := []byte(strings.Replace(string(issued.JSON), `"share":0.75`, `"share":1`, 1))
	if _, err := v.Verify(edited, receipt.Originals{}, t0()); !errors.Is(err, receipt.ErrBadSignature) {
		t.Errorf("Verify of an edited agreement: %v, want ErrBadSignature", err)
	}
	p.Agreement = nil
	plain := issue(t, is, p)
	var doc struct{ Decision map[string]json.RawMessage }
	if err := json.Unmarshal(plain.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	if a, ok := doc.Decision["agreement"]; ok {
		t.Errorf("receipt without an agreement states decision.agreement %s", a)
	}
}

// A receipt dated after the verifier's clock is not issued yet: a date
// in the future would stretch its life. Within MaxClockSkew it passes.
func TestVerify_issuedInTheFuture(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	data := issue(t, is, fullParams()).JSON // dated t0
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	for _, tc := range []struct {
		now  time.Time
		want receipt.CheckStatus
	}{
		{t0(), receipt.CheckPassed},
		{t0().Add(-receipt.MaxClockSkew), receipt.CheckPassed},
		{t0().Add(-receipt.MaxClockSkew - time.Millisecond), receipt.CheckFailed},
		{t0().Add(-24 * time.Hour), receipt.CheckFailed},
	} {
		res, err := v.Verify(data, receipt.Originals{}, tc.now)
		c, _ := res.Check(receipt.CheckKeyWindow)
		if c.Status != tc.want || (tc.want == receipt.CheckFailed) != errors.Is(err, receipt.ErrKeyWindow) {
			t.Errorf("verified at %v, a receipt of %v: key_window %s (%s), err %v; want %s", tc.now, t0(), c.Status, c.Detail, err, tc.want)
		}
	}
}
