package receipt_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestIssuer_Issue_include checks each include flag alone: exactly its
// member appears in the JSON, and no other optional one.
func TestIssuer_Issue_include(t *testing.T) {
	optional := []string{"consensus_snapshot", "policy_snapshot", "task_meta.input_hash", "task_meta.output_hash", "cortensor_refs"}
	tests := []struct {
		include receipt.Include
		want    []string
	}{
		{receipt.Include{}, nil},
		{receipt.Include{ConsensusSnapshot: true}, []string{"consensus_snapshot"}},
		{receipt.Include{PolicySnapshot: true}, []string{"policy_snapshot"}},
		{receipt.Include{InputHash: true}, []string{"task_meta.input_hash"}},
		{receipt.Include{OutputHash: true}, []string{"task_meta.output_hash"}},
		{receipt.Include{RouterTraceRefs: true}, []string{"cortensor_refs"}},
		{receipt.Include{ConsensusSnapshot: true, PolicySnapshot: true, InputHash: true, OutputHash: true, RouterTraceRefs: true}, optional},
	}
	is, _ := newIssuer(t, newSigner(t, 1))
	for _, tc := range tests {
		p := fullParams()
		p.Request.Include = tc.include
		doc := decodeMap(t, issue(t, is, p).JSON)
		var got []string
		for _, path := range optional {
			m, key := doc, path
			if before, after, ok := strings.Cut(path, "."); ok {
				m, key = dig(doc, before), after
			}
			if _, ok := m[key]; ok {
				got = append(got, path)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("include %+v: members present (-want +got):\n%s", tc.include, diff)
		}
		for _, always := range []string{"receipt_id", "mode", "task_meta", "decision", "signing", "ttl", "visibility"} {
			if _, ok := doc[always]; !ok {
				t.Errorf("include %+v: %s is missing", tc.include, always)
			}
		}
		if _, ok := dig(doc, "task_meta")["type"]; !ok {
			t.Errorf("include %+v: task_meta.type is missing", tc.include)
		}
	}
}

func TestIssuer_Issue_contents(t *testing.T) {
	s := newSigner(t, 1)
	is, store := newIssuer(t, s)
	is.Now = func() time.Time { return time.Date(2026, 5, 1, 14, 0, 0, 123456789, time.FixedZone("CEST", 2*3600)) }
	p := fullParams()
	p.Reasons = nil
	p.Consensus.Verdicts = nil
	p.Refs = &receipt.Refs{}
	out := issue(t, is, p)

	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return "sha256:" + hex.EncodeToString(h[:]) }
	want := &receipt.Receipt{
		ReceiptID: out.Receipt.ReceiptID,
		Mode:      "validation",
		TaskMeta: receipt.TaskMeta{
			Type:       "summary",
			InputHash:  sum(`"What is the capital of France?"`),
			OutputHash: sum(`{"answer":"Paris"}`),
		},
		Decision:       receipt.Decision{Status: "VALID", Confidence: 0.9, Reasons: []string{}, Timestamp: "2026-05-01T12:00:00.123Z"},
		PolicySnapshot: &receipt.PolicySnapshot{Tier: "safe", Consensus: receipt.PolicyConsensus{Replicas: 3, Strategy: "majority"}},
		ConsensusSnapshot: &receipt.ConsensusSnapshot{
			Replicas: 3, Agreement: 0.67, Verdicts: []string{}, Strategy: "majority", Confidence: 0.8,
		},
		CortensorRefs: &receipt.Refs{Sessions: []int64{}, Tasks: []string{}, RouterTraceIDs: []string{}},
		Signing: &receipt.Signing{
			Issuer: s.Issuer(), SignatureScheme: "ed25519-jcs",
			Signature: out.Receipt.Signing.Signature, ChainAnchor: json.RawMessage("null"),
		},
		TTL:        "30d",
		Visibility: "shared",
	}
	if diff := cmp.Diff(want, out.Receipt); diff != "" {
		t.Errorf("issued receipt (-want +got):\n%s", diff)
	}
	// Empty lists are written as [], never null.
	for _, frag := range []string{`"reasons":[]`, `"verdicts":[]`, `"sessions":[]`, `"tasks":[]`, `"router_trace_ids":[]`, `"chain_anchor":null`} {
		if !strings.Contains(string(out.JSON), frag) {
			t.Errorf("issued JSON lacks %s: %s", frag, out.JSON)
		}
	}
	wantExpiry := time.Date(2026, 5, 31, 12, 0, 0, 123e6, time.UTC)
	if !out.ExpiresAt.Equal(wantExpiry) {
		t.Errorf("ExpiresAt = %v, want %v", out.ExpiresAt, wantExpiry)
	}
	rec, err := store.Get(context.Background(), out.Receipt.ReceiptID, wantExpiry.Add(-time.Millisecond))
	if err != nil {
		t.Fatalf("stored record: %v", err)
	}
	wantRec := receipt.Record{
		ID: out.Receipt.ReceiptID, Data: out.JSON, Owner: "owner-a",
		Visibility: "shared", Counterparties: []string{"party-b"}, ExpiresAt: wantExpiry,
	}
	if diff := cmp.Diff(wantRec, rec); diff != "" {
		t.Errorf("stored record (-want +got):\n%s", diff)
	}
}

// TestIssuer_Issue_at: Params.At, when set, is the decision's time in
// place of the issuer's clock, to the millisecond, and the retention
// runs from it.
func TestIssuer_Issue_at(t *testing.T) {
	is, _ := newIssuer(t, newSigner(t, 1))
	p := fullParams()
	p.At = time.Date(2026, 4, 30, 23, 59, 59, 999999999, time.FixedZone("EST", -5*3600))
	out := issue(t, is, p)
	if got, want := out.Receipt.Decision.Timestamp, "2026-05-01T04:59:59.999Z"; got != want {
		t.Errorf("decision.timestamp = %s, want %s (Params.At)", got, want)
	}
	if got, want := out.ExpiresAt, time.Date(2026, 5, 31, 4, 59, 59, 999e6, time.UTC); !got.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", got, want)
	}
}

func TestIssuer_Issue_clamps(t *testing.T) {
	tests := []struct {
		env     receipt.Environment
		ttl     string
		vis     receipt.Visibility
		wantTTL string
		wantVis receipt.Visibility
		expiry  time.Duration
	}{
		{receipt.TestEnvironment(), "90d", "public", "7d", "shared", 7 * 24 * time.Hour},
		{receipt.TestEnvironment(), "", "", "7d", "private", 7 * 24 * time.Hour},
		{receipt.ProductionEnvironment(), "90d", "public", "90d", "shared", 90 * 24 * time.Hour},
		{receipt.ProductionEnvironment(), "365d", "private", "90d", "private", 90 * 24 * time.Hour},
		{receipt.ProductionEnvironment(), "", "", "30d", "private", 30 * 24 * time.Hour},
	}
	for _, tc := range tests {
		is, store := newIssuer(t, newSigner(t, 1))
		is.Environment = tc.env
		p := fullParams()
		p.Request.TTL, p.Request.Visibility = tc.ttl, tc.vis
		out := issue(t, is, p)
		if out.Receipt.TTL != tc.wantTTL || out.Receipt.Visibility != tc.wantVis || !out.ExpiresAt.Equal(t0().Add(tc.expiry)) {
			t.Errorf("%s, ttl %q, visibility %q: got %s %s %v, want %s %s %v", tc.env.Name, tc.ttl, tc.vis,
				out.Receipt.TTL, out.Receipt.Visibility, out.ExpiresAt, tc.wantTTL, tc.wantVis, t0().Add(tc.expiry))
		}
		rec, err := store.Get(context.Background(), out.Receipt.ReceiptID, t0())
		if err != nil || rec.Visibility != tc.wantVis || !rec.ExpiresAt.Equal(out.ExpiresAt) {
			t.Errorf("%s: stored record %+v, %v; want visibility %s, expiry %v", tc.env.Name, rec, err, tc.wantVis, out.ExpiresAt)
		}
	}
}

func TestIssuer_Issue_delivery(t *testing.T) {
	is, _ := newIssuer(t, newSigner(t, 1))
	p := fullParams()
	inline := issue(t, is, p)
	if got := inline.ResponseMember(); string(got) != string(inline.JSON) {
		t.Errorf("inline ResponseMember = %s, want the receipt", got)
	}
	p.Request.Mode = receipt.DeliveryDetached
	detached := issue(t, is, p)
	var ref map[string]any
	if err := json.Unmarshal(detached.ResponseMember(), &ref); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"receipt_id": detached.Receipt.ReceiptID, "ttl": "30d", "visibility": "shared",
		"expires_at": "2026-05-31T12:00:00.000Z",
	}
	if diff := cmp.Diff(want, ref); diff != "" {
		t.Errorf("detached ResponseMember (-want +got):\n%s", diff)
	}
}

func TestIssuer_Issue_uniqueIDs(t *testing.T) {
	is, _ := newIssuer(t, nil)
	seen := map[string]bool{}
	for range 200 {
		id := issue(t, is, fullParams()).Receipt.ReceiptID
		if seen[id] || !strings.HasPrefix(id, "rcpt_") || len(id) != 31 {
			t.Fatalf("id %q is repeated or malformed", id)
		}
		seen[id] = true
	}
}

func TestIssuer_Issue_unsigned(t *testing.T) {
	is, _ := newIssuer(t, nil)
	out := issue(t, is, fullParams())
	if out.Receipt.Signing != nil || strings.Contains(string(out.JSON), `"signing"`) {
		t.Errorf("unsigned receipt has a signing member: %s", out.JSON)
	}
}

func TestIssuer_Issue_errors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*receipt.Issuer, *receipt.Params)
		is     error // a sentinel to match, or nil for any error
		status int   // the status of a *receipt.Error, or 0
	}{
		{"mode none", func(_ *receipt.Issuer, p *receipt.Params) { p.Request = receipt.Request{Mode: "none"} }, receipt.ErrNotRequested, 0},
		{"mode empty", func(_ *receipt.Issuer, p *receipt.Params) { p.Request = receipt.Request{} }, receipt.ErrNotRequested, 0},
		{"mode none with terms", func(_ *receipt.Issuer, p *receipt.Params) { p.Request.Mode = "none" }, nil, 400},
		{"mode empty with terms", func(_ *receipt.Issuer, p *receipt.Params) { p.Request.Mode = "" }, nil, 400},
		{"bad ttl", func(_ *receipt.Issuer, p *receipt.Params) { p.Request.TTL = "1w" }, nil, 400},
		{"bad delivery", func(_ *receipt.Issuer, p *receipt.Params) { p.Request.Mode = "email" }, nil, 400},
		{"no owner", func(_ *receipt.Issuer, p *receipt.Params) { p.Owner = "" }, nil, 0},
		{"unknown call mode", func(_ *receipt.Issuer, p *receipt.Params) { p.Mode = "guessing" }, receipt.ErrSchema, 0},
		{"unknown status", func(_ *receipt.Issuer, p *receipt.Params) { p.Status = "MAYBE" }, receipt.ErrSchema, 0},
		{"confidence above 1", func(_ *receipt.Issuer, p *receipt.Params) { p.Confidence = 1.5 }, receipt.ErrSchema, 0},
		{"replicas 6", func(_ *receipt.Issuer, p *receipt.Params) { p.Consensus.Replicas = 6 }, receipt.ErrSchema, 0},
		{"leader of session 0", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Leader = &receipt.LeaderSnapshot{Won: 4}
		}, receipt.ErrSchema, 0},
		{"leader at a level above 1/2", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Leader = &receipt.LeaderSnapshot{Session: 1, Won: 4, Level: 0.75}
		}, receipt.ErrSchema, 0},
		{"leader of a negative margin", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Leader = &receipt.LeaderSnapshot{Session: 1, Won: 4, Level: 0.125, Margin: -0.1}
		}, receipt.ErrSchema, 0},
		{"plurality of an empty group", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Plurality = &receipt.PluralitySnapshot{Groups: []int{2, 0}, Coincidence: 0.1, Reliability: 0.8}
		}, receipt.ErrSchema, 0},
		{"plurality of no reliability", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Plurality = &receipt.PluralitySnapshot{Groups: []int{2, 1}, Coincidence: 0.1}
		}, receipt.ErrSchema, 0},
		{"leader beyond 2^53", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Leader = &receipt.LeaderSnapshot{Session: 1 << 54, Won: 4}
		}, nil, 0},
		{"dissent of session 0", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Dissent = &receipt.LeaderSnapshot{Won: 3}
		}, receipt.ErrSchema, 0},
		{"dissent beyond 2^53", func(_ *receipt.Issuer, p *receipt.Params) {
			p.Policy.Dissent = &receipt.LeaderSnapshot{Session: 1 << 54, Won: 3}
		}, nil, 0},
		{"policy missing", func(_ *receipt.Issuer, p *receipt.Params) { p.Policy = nil }, nil, 0},
		{"consensus missing", func(_ *receipt.Issuer, p *receipt.Params) { p.Consensus = nil }, nil, 0},
		{"refs missing", func(_ *receipt.Issuer, p *receipt.Params) { p.Refs = nil }, nil, 0},
		{"input not encodable", func(_ *receipt.Issuer, p *receipt.Params) { p.Input = make(chan int) }, nil, 0},
		{"no store", func(is *receipt.Issuer, _ *receipt.Params) { is.Store = nil }, nil, 0},
		{"bad environment", func(is *receipt.Issuer, _ *receipt.Params) { is.Environment = receipt.Environment{Name: "x"} }, nil, 0},
		{"signer fails", func(is *receipt.Issuer, _ *receipt.Params) { is.Signer = failingSigner{} }, errSign, 0},
		{"store fails", func(is *receipt.Issuer, _ *receipt.Params) { is.Store = failingStore{} }, errStore, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is, _ := newIssuer(t, newSigner(t, 1))
			p := fullParams()
			tc.mutate(is, &p)
			out, err := is.Issue(context.Background(), p)
			if err == nil || out != nil {
				t.Fatalf("Issue = %v, %v; want nil and an error", out, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Issue = %v, want %v", err, tc.is)
			}
			var pe *receipt.Error
			if tc.status != 0 && (!errors.As(err, &pe) || pe.Status != tc.status) {
				t.Errorf("Issue = %v, want a %d *Error", err, tc.status)
			}
			if !strings.HasPrefix(err.Error(), "receipt: ") && tc.status == 0 && tc.is != errSign && tc.is != errStore {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

var (
	errSign  = errors.New("key service down")
	errStore = errors.New("disk full")
)

type failingSigner struct{}

func (failingSigner) Issuer() string                               { return "kms:key-1" }
func (failingSigner) Scheme() string                               { return "ed25519-jcs" }
func (failingSigner) Sign(context.Context, []byte) ([]byte, error) { return nil, errSign }

type failingStore struct{}

func (failingStore) Put(context.Context, receipt.Record) error { return errStore }
func (failingStore) Get(context.Context, string, time.Time) (receipt.Record, error) {
	return receipt.Record{}, errStore
}
func (failingStore) DeleteExpired(context.Context, time.Time) (int, error) { return 0, errStore }

func TestIssuer_Issue_doesNotKeepParams(t *testing.T) {
	is, store := newIssuer(t, newSigner(t, 1))
	p := fullParams()
	out := issue(t, is, p)
	p.Reasons[0] = "changed"
	p.Counterparties[0] = "changed"
	p.Consensus.Verdicts[0] = "changed"
	if !slices.Equal(out.Receipt.Decision.Reasons, []string{"consistent", "grounded"}) || out.Receipt.ConsensusSnapshot.Verdicts[0] != "VALID" {
		t.Errorf("the receipt shares slices with Params: %+v", out.Receipt)
	}
	rec, _ := store.Get(context.Background(), out.Receipt.ReceiptID, t0())
	if rec.Counterparties[0] != "party-b" {
		t.Errorf("the record shares Counterparties with Params: %v", rec.Counterparties)
	}
}

// TestIssuer_Issue_ownsSnapshots fills every slice and pointer of the
// snapshots, issues, then changes each in Params: the issued receipt
// still reads as the JSON that was signed, owning its data.
func TestIssuer_Issue_ownsSnapshots(t *testing.T) {
	is, _ := newIssuer(t, newSigner(t, 1))
	p := fullParams()
	one, two, three := 1.0, 2.0, 2.0
	p.Policy.Calibration = &receipt.CalibrationSnapshot{Tier: "safe/VALID", Basis: "outcomes", Outcomes: 4, Uncalibrated: 0.8,
		Points: []receipt.CalibrationPoint{{Score: 0.7, Rate: 0.75, Outcomes: 4}}}
	p.Policy.Leader = &receipt.LeaderSnapshot{Session: 201, Won: 7, Lost: 1, Level: 0.125, Margin: 0.06}
	p.Policy.Dissent = &receipt.LeaderSnapshot{Session: 202, Won: 9, Lost: 0}
	p.Policy.Plurality = &receipt.PluralitySnapshot{Groups: []int{2, 1}, Coincidence: 0.1, Reliability: 0.8}
	p.Consensus.Agreeing = []int{0, 1}
	p.Consensus.Weights = []float64{0.9, 0.8, 0.1}
	p.Consensus.Tolerance = &receipt.Tolerance{Absolute: 0.5}
	p.Consensus.Numbers = []*float64{&one, &two, &three}
	p.Consensus.Aggregate = &two
	out := issue(t, is, p)

	p.Policy.Calibration.Points[0].Rate = 0
	p.Policy.Leader.Won = 0
	p.Policy.Dissent.Session = 1
	p.Policy.Plurality.Groups[0] = 5
	p.Consensus.Agreeing[0] = 4
	p.Consensus.Weights[0] = 0
	p.Consensus.Tolerance.Absolute = 9
	*p.Consensus.Numbers[0] = 7
	p.Consensus.Numbers[1] = nil
	two = 8
	p.Refs.Sessions[0] = 1
	p.Refs.Tasks[0] = "changed"
	p.Refs.RouterTraceIDs[0] = "changed"

	signed, err := receipt.Parse(out.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(signed, out.Receipt); diff != "" {
		t.Errorf("the issued receipt changed with Params after Issue (-signed +issued):\n%s", diff)
	}
}

// A number JSON cannot write (NaN or an infinity) in a snapshot is refused
// by Issue with an error naming its field, not encoding/json's bare
// "unsupported value", and nothing is stored.
func TestIssuer_Issue_nonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		field  string
		mutate func(*receipt.Params)
	}{
		{"consensus_snapshot.weights[1]", func(p *receipt.Params) { p.Consensus.Weights = []float64{1, nan, 1} }},
		{"consensus_snapshot.aggregate", func(p *receipt.Params) { p.Consensus.Aggregate = &inf }},
		{"consensus_snapshot.numbers[0]", func(p *receipt.Params) { p.Consensus.Numbers = []*float64{&inf} }},
		{"consensus_snapshot.tolerance.absolute", func(p *receipt.Params) { p.Consensus.Tolerance = &receipt.Tolerance{Absolute: inf} }},
		{"policy_snapshot.leader.won", func(p *receipt.Params) { p.Policy.Leader = &receipt.LeaderSnapshot{Session: 1, Won: inf} }},
		{"policy_snapshot.calibration.points[0].outcomes", func(p *receipt.Params) {
			p.Policy.Calibration = &receipt.CalibrationSnapshot{Tier: "safe", Basis: "outcomes",
				Points: []receipt.CalibrationPoint{{Score: 0.5, Rate: 0.5, Outcomes: inf}}}
		}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			is, store := newIssuer(t, newSigner(t, 1))
			p := fullParams()
			tc.mutate(&p)
			_, err := is.Issue(context.Background(), p)
			var se *receipt.SchemaError
			if !errors.As(err, &se) || len(se.Fields) != 1 || se.Fields[0].Field != tc.field || se.Fields[0].Rule != "finite" {
				t.Fatalf("Issue = %v, want a schema error naming %s, rule finite", err, tc.field)
			}
			if n, _ := store.LogSize(context.Background()); n != 0 {
				t.Errorf("a refused receipt was stored: log size %d", n)
			}
		})
	}
}

// TestIssuer_Issue_calibrationBases: a receipt states each basis a
// confidence is read from (a held one included) and parses back with it;
// any other basis is refused by name.
func TestIssuer_Issue_calibrationBases(t *testing.T) {
	for _, basis := range []string{"uncalibrated", "outcomes", "held"} {
		is, _ := newIssuer(t, newSigner(t, 1))
		p := fullParams()
		p.Policy.Calibration = &receipt.CalibrationSnapshot{Tier: "adaptive", Basis: basis, Outcomes: 3, Uncalibrated: 0.34, Conservative: 0.6,
			Points: []receipt.CalibrationPoint{{Score: 0.69, Rate: 0.68, Outcomes: 3}}}
		out := issue(t, is, p)
		got, err := receipt.Parse(out.JSON)
		if err != nil {
			t.Fatalf("%s: Parse: %v", basis, err)
		}
		if got.PolicySnapshot == nil || got.PolicySnapshot.Calibration == nil || got.PolicySnapshot.Calibration.Basis != basis {
			t.Errorf("%s: parsed policy snapshot %+v", basis, got.PolicySnapshot)
		}
	}
	is, _ := newIssuer(t, newSigner(t, 1))
	p := fullParams()
	p.Policy.Calibration = &receipt.CalibrationSnapshot{Tier: "adaptive", Basis: "guessed", Points: []receipt.CalibrationPoint{}}
	_, err := is.Issue(context.Background(), p)
	var se *receipt.SchemaError
	if !errors.As(err, &se) || len(se.Fields) != 1 || se.Fields[0].Field != "policy_snapshot.calibration.basis" {
		t.Errorf("Issue with basis %q = %v, want a schema error naming policy_snapshot.calibration.basis", "guessed", err)
	}
}
