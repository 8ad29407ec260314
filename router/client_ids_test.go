package router

import (
	"encoding/json"
	"testing"
)

func TestQuoteSessionIDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"v1", &DelegateV1Request{SessionID: 7, TaskRequestInput: "x"}, `{"session_id":"7","task_request_input":"x"}`},
		{"no ids", &DelegateV3Request{Consensus: ConsensusRequest{Replicas: 1}}, ""}, // "": as json.Marshal writes it
		{"v3 pool", &FactcheckRequest{Claim: "c", Consensus: ConsensusRequest{Replicas: 3, SessionPool: []SessionID{1, 22, 333}}},
			`{"claim":"c","policy":{},"consensus":{"replicas":3,"session_pool":["1","22","333"]}}`},
		{"v1 pool, context untouched", &FactcheckV1Request{Claim: "c", SessionPool: []SessionID{5}, Context: map[string]any{"session_id": 9}},
			`{"claim":"c","context":{"session_id":9},"policy":{},"session_pool":["5"]}`},
		{"negative id stays a number in a string", &DelegateV1Request{SessionID: -4}, `{"session_id":"-4","task_request_input":""}`},
		{"not an object", []int{1, 2}, `[1,2]`},
	} {
		got, err := quoteSessionIDs(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.want == "" {
			plain, _ := json.Marshal(tc.in)
			tc.want = string(plain)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: output %s: %v", tc.name, got, err)
		}
		if err := json.Unmarshal([]byte(tc.want), &w); err != nil {
			t.Fatal(err)
		}
		gs, _ := json.Marshal(g)
		ws, _ := json.Marshal(w)
		if string(gs) != string(ws) {
			t.Errorf("%s: quoteSessionIDs = %s, want %s", tc.name, got, tc.want)
		}
	}
	if _, err := quoteSessionIDs(map[string]any{"f": func() {}}); err == nil {
		t.Error("an unencodable request: no error")
	}
}

// BenchmarkQuoteSessionIDs measures what WithSessionIDsAsStrings adds to
// encoding a version 3 request, against encoding it alone.
func BenchmarkQuoteSessionIDs(b *testing.B) {
	req := &ValidateV3Request{SessionID: 4, Consensus: ConsensusRequest{Replicas: 5, SessionPool: []SessionID{201, 202, 203, 204, 205}}}
	req.Claim = Claim{Type: "summary", Output: json.RawMessage(`"Revenue rose 12% in the third quarter."`)}
	req.Context = map[string]any{"market": "paper"}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("quoted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := quoteSessionIDs(req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
