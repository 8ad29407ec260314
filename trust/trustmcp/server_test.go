package trustmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

func newSession(t *testing.T, cfg trustmcp.Config) *mcp.ClientSession {
	t.Helper()
	s, err := trustmcp.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, s)
}

func TestNewServer_noCaller(t *testing.T) {
	if _, err := trustmcp.NewServer(trustmcp.Config{}); err == nil {
		t.Fatal("NewServer without a Caller succeeded")
	}
}

func TestServer_listTools(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name string
		cfg  trustmcp.Config
		want []string
	}{
		{"all", f.cfg, []string{"arbitrate", "delegate_task", "factcheck", "get_receipt", "report_outcome", "validate_claim", "verify_receipt"}},
		{"caller only", trustmcp.Config{Caller: f.svc}, []string{"arbitrate", "delegate_task", "report_outcome", "validate_claim"}},
		{"a caller that takes no reports", trustmcp.Config{Caller: callOnly{f.svc}}, []string{"arbitrate", "delegate_task", "validate_claim"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := trustmcp.NewServer(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := connect(t, s).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range res.Tools {
				got = append(got, tool.Name)
				readOnly := tool.Name == "get_receipt" || tool.Name == "verify_receipt"
				if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != readOnly {
					t.Errorf("%s: annotations %+v, want readOnlyHint %v", tool.Name, tool.Annotations, readOnly)
				}
				if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
					t.Errorf("%s: description %q, input schema %v, output schema %v: want all three", tool.Name, tool.Description, tool.InputSchema, tool.OutputSchema)
				}
				// A trust tool states what adaptive costs at most: the bound of
				// consensus.Stop, which the trust service's adaptive tier obeys.
				if !readOnly && tool.Name != "factcheck" && tool.Name != "report_outcome" {
					if bound := fmt.Sprintf("at most %d runs in all", consensus.DefaultMaxRuns); !strings.Contains(tool.Description, bound) {
						t.Errorf("%s: description %q does not say adaptive costs %s", tool.Name, tool.Description, bound)
					}
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

// schema is the part of a JSON schema the tests read.
type schema struct {
	Type       any                `json:"type"`
	Required   []string           `json:"required"`
	Properties map[string]*schema `json:"properties"`
	Enum       []any              `json:"enum"`
	Any        bool               // the schema true: any value
}

func (s *schema) UnmarshalJSON(b []byte) error {
	if string(b) == "true" {
		s.Any = true
		return nil
	}
	type plain schema
	return json.Unmarshal(b, (*plain)(s))
}

func TestServer_schemas(t *testing.T) {
	s := newServer(t)
	res, err := connect(t, s).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string][2]schema{}
	for _, tool := range res.Tools {
		var in, out schema
		for _, c := range []struct {
			from any
			into *schema
		}{{tool.InputSchema, &in}, {tool.OutputSchema, &out}} {
			b, _ := json.Marshal(c.from)
			if err := json.Unmarshal(b, c.into); err != nil {
				t.Fatalf("%s: schema %s: %v", tool.Name, b, err)
			}
		}
		tools[tool.Name] = [2]schema{in, out}
	}
	vc := tools["validate_claim"]
	if diff := cmp.Diff([]string{"claimed_result"}, vc[0].Required); diff != "" {
		t.Errorf("validate_claim required (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"fast", "safe", "oracle", "adaptive"}, vc[0].Properties["policy"].Enum); diff != "" {
		t.Errorf("validate_claim policy enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"none", "inline", "detached"}, vc[0].Properties["receipt"].Enum); diff != "" {
		t.Errorf("validate_claim receipt enum (-want +got):\n%s", diff)
	}
	if p := vc[0].Properties["claimed_result"]; p == nil || p.Type != nil || len(p.Enum) > 0 {
		t.Errorf("validate_claim claimed_result schema %+v, want any JSON value (no type)", p)
	}
	for _, name := range []string{"validate_claim", "delegate_task", "arbitrate"} {
		for _, member := range []string{"status", "confidence", "evidence", "retry_instructions", "trace_id", "receipt"} {
			if tools[name][1].Properties[member] == nil {
				t.Errorf("%s: output schema lacks %s", name, member)
			}
		}
	}
	if diff := cmp.Diff([]string{"claimed_result", "dispute_context"}, tools["arbitrate"][0].Required); diff != "" {
		t.Errorf("arbitrate required (-want +got):\n%s", diff)
	}
	dt := tools["delegate_task"][0]
	if p := dt.Properties["answer"]; p == nil || p.Type != "string" {
		t.Errorf("delegate_task answer schema %+v, want a string", p)
	} else if diff := cmp.Diff([]any{"number"}, p.Enum); diff != "" {
		t.Errorf("delegate_task answer enum (-want +got):\n%s", diff)
	}
	if p := dt.Properties["tolerance"]; p == nil || !slices.Contains(typesOf(p), "object") || p.Properties["absolute"] == nil || p.Properties["relative"] == nil || len(p.Required) != 0 {
		t.Errorf("delegate_task tolerance schema %+v, want an object of absolute and relative, neither required", p)
	}
	if diff := cmp.Diff([]any{3.0, 5.0}, tools["factcheck"][0].Properties["replicas"].Enum); diff != "" {
		t.Errorf("factcheck replicas enum (-want +got):\n%s", diff)
	}
	for name, member := range map[string]string{"factcheck": "consensus", "get_receipt": "receipt", "verify_receipt": "checks"} {
		if tools[name][1].Properties[member] == nil {
			t.Errorf("%s: output schema lacks %s", name, member)
		}
	}
}

func TestServer_validateClaim(t *testing.T) {
	f := newFixture(t)
	fs := newSession(t, f.cfg)
	for _, c := range []struct {
		claim  string
		policy string
		want   trust.Status
		runs   int
	}{
		{"17 * 3 = 51", "", trust.StatusValid, 3},
		{"17 * 3 = 50", "safe", trust.StatusInvalid, 3},
		{"17 * 3 = 51", "fast", trust.StatusValid, 1},
		{"17 * 3 = 50", "oracle", trust.StatusInvalid, 5},
	} {
		args := map[string]any{"claimed_result": c.claim, "input": "What is 17 * 3?"}
		if c.policy != "" {
			args["policy"] = c.policy
		}
		res := callTool(t, fs, "validate_claim", args)
		var got trust.Response
		decode(t, res, &got)
		if got.Status != c.want || got.Evidence.Redundancy != c.runs {
			t.Errorf("%q %s: %s with %d runs, want %s with %d", c.claim, c.policy, got.Status, got.Evidence.Redundancy, c.want, c.runs)
		}
		if sum := text(res); !strings.HasPrefix(sum, string(c.want)+", confidence ") || !strings.Contains(sum, got.TraceID) {
			t.Errorf("%q: summary %q, want it to start with %s and name trace %s", c.claim, sum, c.want, got.TraceID)
		}
	}
}

func TestServer_delegateArbitrateFactcheck(t *testing.T) {
	f := newFixture(t)
	fs := newSession(t, f.cfg)

	var del trust.Response
	decode(t, callTool(t, fs, "delegate_task", map[string]any{"input": "17 * 3", "policy": "safe"}), &del)
	if del.Status != trust.StatusValid || string(del.Result) != `"51"` {
		t.Errorf("delegate_task: %s %s, want VALID \"51\"", del.Status, del.Result)
	}
	// A numeric answer: the median of the runs, a JSON number.
	var num trust.Response
	decode(t, callTool(t, fs, "delegate_task", map[string]any{"input": "17 * 3", "policy": "safe", "answer": "number", "tolerance": map[string]any{"absolute": 0.5}}), &num)
	if num.Status != trust.StatusValid || string(num.Result) != `51` {
		t.Errorf("delegate_task answer number: %s %s, want VALID 51", num.Status, num.Result)
	}
	var byObjective trust.Response
	decode(t, callTool(t, fs, "delegate_task", map[string]any{"objective": "17 * 3", "policy": "fast"}), &byObjective)
	if string(byObjective.Result) != `"51"` {
		t.Errorf("delegate_task by objective: %s, want \"51\"", byObjective.Result)
	}
	// judged: the sessions judge the answer "51", in which they find no
	// equation to check, and say what is missing.
	var judged trust.Response
	decode(t, callTool(t, fs, "delegate_task", map[string]any{"input": "17 * 3", "policy": "safe", "agreement": "judged"}), &judged)
	if judged.Status != trust.StatusNeedsSpec || judged.Evidence.Judging == nil || len(judged.Evidence.Judging.Candidates) != 1 {
		t.Errorf("delegate_task judged: %s, judging %+v, want NEEDS_SPEC after one judged candidate", judged.Status, judged.Evidence.Judging)
	}

	for claim, want := range map[string]trust.Status{"17 * 3 = 51": trust.StatusSellerValid, "17 * 3 = 50": trust.StatusSellerInvalid} {
		var arb trust.Response
		decode(t, callTool(t, fs, "arbitrate", map[string]any{"claimed_result": claim, "dispute_context": map[string]any{"buyer": "the product is wrong"}}), &arb)
		if arb.Status != want {
			t.Errorf("arbitrate %q: %s, want %s", claim, arb.Status, want)
		}
	}

	var fc router.FactcheckResponse
	res := callTool(t, fs, "factcheck", map[string]any{"claim": "17 * 3 = 50", "replicas": 5})
	decode(t, res, &fc)
	if fc.Verdict != router.VerdictFalse || fc.Consensus.Replicas != 5 || len(fc.Evidence.Runs) != 5 {
		t.Errorf("factcheck: %s on %d replicas with %d runs, want FALSE on 5", fc.Verdict, fc.Consensus.Replicas, len(fc.Evidence.Runs))
	}
	if !strings.HasPrefix(text(res), "FALSE") {
		t.Errorf("factcheck summary %q, want it to start with FALSE", text(res))
	}
}

func TestServer_receipt(t *testing.T) {
	f := newFixture(t)
	fs := newSession(t, f.cfg)

	var resp trust.Response
	decode(t, callTool(t, fs, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 51", "receipt": "inline"}), &resp)
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatalf("inline receipt %s: %v", resp.Receipt, err)
	}
	if issued.Decision.Status != "VALID" || issued.Signing == nil || issued.ConsensusSnapshot == nil || issued.TaskMeta.OutputHash == "" {
		t.Errorf("receipt %+v: want a signed VALID decision with every snapshot and hash", issued)
	}

	var got trustmcp.ReceiptResult
	res := callTool(t, fs, "get_receipt", map[string]any{"receipt_id": issued.ReceiptID})
	decode(t, res, &got)
	if !jsonEqual(got.Receipt, resp.Receipt) {
		t.Errorf("get_receipt = %s, want the inline receipt %s", got.Receipt, resp.Receipt)
	}
	if !strings.Contains(text(res), issued.ReceiptID) {
		t.Errorf("get_receipt summary %q does not name the receipt", text(res))
	}

	var vr receipt.VerifyResponse
	res = callTool(t, fs, "verify_receipt", map[string]any{"receipt": got.Receipt})
	decode(t, res, &vr)
	if !vr.Valid || vr.ReceiptID != issued.ReceiptID || len(vr.Checks) == 0 {
		t.Errorf("verify_receipt = %+v, want valid", vr)
	}
	if !strings.HasPrefix(text(res), "valid: ") {
		t.Errorf("verify_receipt summary %q", text(res))
	}
	// The receipt as a string holding its JSON is the same receipt.
	var vs receipt.VerifyResponse
	decode(t, callTool(t, fs, "verify_receipt", map[string]any{"receipt": string(got.Receipt)}), &vs)
	if !vs.Valid {
		t.Errorf("verify_receipt of the receipt as a string = %+v, want valid", vs)
	}

	// MCP carries the receipt as a JSON value, not as bytes, and the SDK
	// writes it again on the way (escaping <, > and &): a receipt holding
	// them still verifies.
	html, err := f.svc.Call(context.Background(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyFast,
		Task:    trust.Task{Type: "<b>sum</b> & more", ClaimedResult: trust.JSON("17 * 3 = 51")},
		Receipt: receipt.Inline()})
	if err != nil {
		t.Fatal(err)
	}
	var vh receipt.VerifyResponse
	decode(t, callTool(t, fs, "verify_receipt", map[string]any{"receipt": html.Receipt}), &vh)
	if !vh.Valid {
		t.Errorf("verify_receipt of a receipt holding <, > and & = %+v, want valid", vh)
	}
	// get_receipt's receipt_json is the text as issued, which an offline
	// verifier checks byte for byte.
	hr, err := receipt.Parse(html.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	var gh trustmcp.ReceiptResult
	decode(t, callTool(t, fs, "get_receipt", map[string]any{"receipt_id": hr.ReceiptID}), &gh)
	if gh.ReceiptJSON != string(html.Receipt) {
		t.Errorf("get_receipt receipt_json = %s, want the receipt as issued %s", gh.ReceiptJSON, html.Receipt)
	}
	if _, err := f.verifier.Verify([]byte(gh.ReceiptJSON), receipt.Originals{}, time.Time{}); err != nil {
		t.Errorf("receipt_json does not verify offline: %v", err)
	}

	// A changed decision breaks the signature.
	forged := bytes.Replace(resp.Receipt, []byte(`"VALID"`), []byte(`"INVALID"`), 1)
	res = callTool(t, fs, "verify_receipt", map[string]any{"receipt": json.RawMessage(forged)})
	decode(t, res, &vr)
	if check, _ := findCheck(vr, "signature"); vr.Valid || check.Status != receipt.CheckFailed {
		t.Errorf("verify_receipt of a forged receipt = %+v, want the signature check failed", vr)
	}
	if !strings.HasPrefix(text(res), "not valid: ") {
		t.Errorf("verify_receipt summary of a forged receipt %q", text(res))
	}

	// A detached receipt answers its id; get_receipt fetches the rest.
	var det trust.Response
	decode(t, callTool(t, fs, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 50", "receipt": "detached"}), &det)
	var stub struct {
		ID string `json:"receipt_id"`
	}
	if err := json.Unmarshal(det.Receipt, &stub); err != nil || stub.ID == "" {
		t.Fatalf("detached receipt %s: want a receipt_id", det.Receipt)
	}
	decode(t, callTool(t, fs, "get_receipt", map[string]any{"receipt_id": stub.ID}), &got)
	if r, err := receipt.Parse(got.Receipt); err != nil || r.Decision.Status != "INVALID" {
		t.Errorf("get_receipt of the detached receipt = %s (%v), want its INVALID decision", got.Receipt, err)
	}
}

func findCheck(vr receipt.VerifyResponse, name receipt.CheckName) (receipt.Check, bool) {
	for _, c := range vr.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return receipt.Check{}, false
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}

func TestServer_otherCallersReceiptInvisible(t *testing.T) {
	f := newFixture(t)
	fs := newSession(t, f.cfg)
	// acme's private receipt, made beside the MCP session.
	resp, err := f.svc.Call(trust.WithCaller(context.Background(), "acme"), &trust.Request{
		Mode: trust.ModeValidation, Policy: trust.PolicyFast,
		Task:    trust.Task{ClaimedResult: json.RawMessage(`"17 * 3 = 51"`)},
		Receipt: receipt.Request{Mode: receipt.DeliveryDetached},
	})
	if err != nil {
		t.Fatal(err)
	}
	var stub struct {
		ID string `json:"receipt_id"`
	}
	if err := json.Unmarshal(resp.Receipt, &stub); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{stub.ID, "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		res := callTool(t, fs, "get_receipt", map[string]any{"receipt_id": id})
		if !res.IsError || !strings.Contains(text(res), "no receipt") || strings.Contains(text(res), "acme") {
			t.Errorf("get_receipt %s by another caller: error %v, %q; want the same not-found tool error for both", id, res.IsError, text(res))
		}
	}
}

func TestServer_badArguments(t *testing.T) {
	f := newFixture(t)
	fs := newSession(t, f.cfg)
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string // in the error text
	}{
		{"validate_claim", map[string]any{"claimed_result": "17 * 3 = 51", "policy": "cheap"}, []string{"policy", "fast", "safe", "oracle", "adaptive"}},
		{"validate_claim", map[string]any{"input": "x"}, []string{"claimed_result"}},
		{"validate_claim", map[string]any{"claimed_result": nil}, []string{"claimed_result", "required"}},
		{"validate_claim", map[string]any{"claimed_result": "x", "input": 42}, []string{"input", "string or a JSON object"}},
		{"validate_claim", map[string]any{"claimed_result": "x", "receipt": "email"}, []string{"receipt", "none", "inline", "detached"}},
		{"validate_claim", map[string]any{"claimed_result": "x", "tier": "safe"}, []string{"tier"}},
		{"delegate_task", map[string]any{"policy": "safe"}, []string{"objective", "input"}},
		{"delegate_task", map[string]any{"objective": " "}, []string{"objective", "input"}},
		{"delegate_task", map[string]any{"input": ""}, []string{"input", "must not be empty"}},
		{"delegate_task", map[string]any{"input": map[string]any{}}, []string{"input", "must not be empty"}},
		{"delegate_task", map[string]any{"input": map[string]any{"kind": "array", "items": []any{}}}, []string{"input", "must not be empty"}},
		{"delegate_task", map[string]any{"input": "17 * 3", "agreement": "semantic"}, []string{"agreement", "exact", "judged"}},
		{"delegate_task", map[string]any{"input": "x", "answer": "text"}, []string{"answer", "number"}},
		{"delegate_task", map[string]any{"input": "x", "answer": "number", "tolerance": map[string]any{"abs": 1}}, []string{"tolerance", "abs"}},
		{"delegate_task", map[string]any{"input": "x", "answer": "number", "tolerance": map[string]any{"absolute": -1}}, []string{"tolerance.absolute", "at least 0"}},
		{"delegate_task", map[string]any{"input": "x", "answer": "number", "tolerance": 1}, []string{"tolerance"}},
		{"delegate_task", map[string]any{"input": "x", "tolerance": map[string]any{"absolute": 1}}, []string{"tolerance", "number"}},
		{"arbitrate", map[string]any{"claimed_result": "x"}, []string{"dispute_context"}},
		{"arbitrate", map[string]any{"claimed_result": "x", "dispute_context": nil}, []string{"dispute_context", "required"}},
		{"factcheck", map[string]any{"claim": "17 * 3 = 51", "replicas": 4}, []string{"replicas", "3", "5"}},
		{"factcheck", map[string]any{"claim": "17 * 3 = 51", "mode": "fast"}, []string{"mode", "standard", "realtime"}},
		{"factcheck", map[string]any{"claim": " "}, []string{"claim", "required"}},
		{"get_receipt", map[string]any{"receipt_id": ""}, []string{"receipt_id", "required"}},
		{"verify_receipt", map[string]any{}, []string{"receipt", "required"}},
		{"verify_receipt", map[string]any{"receipt": nil}, []string{"receipt", "required"}},
	} {
		res := callTool(t, fs, c.tool, c.args)
		msg := text(res)
		if !res.IsError {
			t.Errorf("%s %v: no tool error, got %q", c.tool, c.args, msg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %v: error %q does not name %q", c.tool, c.args, msg, w)
			}
		}
	}
}

// typesOf returns the types a schema allows, written as one or a list.
func typesOf(s *schema) []any {
	if l, ok := s.Type.([]any); ok {
		return l
	}
	return []any{s.Type}
}
