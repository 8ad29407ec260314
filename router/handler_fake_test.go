package router_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/vouchkit/vouch/router"
)

// fakeService answers every operation with a response derived from the
// request, counts calls, and records the last request and trace id. A test
// can replace an answer with hook.
type fakeService struct {
	calls atomic.Int64
	hook  func(ctx context.Context, op router.Operation, req any) (any, error)

	mu        sync.Mutex
	lastReq   any
	lastTrace string
}

func (s *fakeService) enter(ctx context.Context, op router.Operation, req any) (any, error, bool) {
	s.calls.Add(1)
	s.mu.Lock()
	s.lastReq, s.lastTrace = req, router.TraceIDFrom(ctx)
	s.mu.Unlock()
	if s.hook != nil {
		resp, err := s.hook(ctx, op, req)
		return resp, err, true
	}
	return nil, nil, false
}

func answer[T any](resp any, err error) (*T, error) {
	if err != nil || resp == nil {
		return nil, err
	}
	return resp.(*T), nil
}

func (s *fakeService) DelegateV1(ctx context.Context, req *router.DelegateV1Request) (*router.DelegateV1Response, error) {
	if resp, err, ok := s.enter(ctx, router.OpDelegateV1, req); ok {
		return answer[router.DelegateV1Response](resp, err)
	}
	return &router.DelegateV1Response{SessionID: req.SessionID, TaskID: "t1", TaskResultOutput: "done: " + req.TaskRequestInput}, nil
}

func (s *fakeService) ValidateV1(ctx context.Context, req *router.ValidateV1Request) (*router.ValidateV1Response, error) {
	if resp, err, ok := s.enter(ctx, router.OpValidateV1, req); ok {
		return answer[router.ValidateV1Response](resp, err)
	}
	return &router.ValidateV1Response{SessionID: req.SessionID, TaskID: "t1", Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"ok"}}, nil
}

func (s *fakeService) DelegateV2(ctx context.Context, req *router.DelegateV2Request) (*router.DelegateV2Response, error) {
	if resp, err, ok := s.enter(ctx, router.OpDelegateV2, req); ok {
		return answer[router.DelegateV2Response](resp, err)
	}
	out, _ := json.Marshal(req.Objective)
	return &router.DelegateV2Response{SessionID: req.SessionID, TaskID: "t2", Result: out,
		Evidence: router.DelegateEvidence{Steps: []router.Step{{Description: "echo"}}, Tools: []string{}}}, nil
}

func (s *fakeService) ValidateV2(ctx context.Context, req *router.ValidateV2Request) (*router.ValidateV2Response, error) {
	if resp, err, ok := s.enter(ctx, router.OpValidateV2, req); ok {
		return answer[router.ValidateV2Response](resp, err)
	}
	return &router.ValidateV2Response{RequestID: req.RequestID, Verdict: router.VerdictInvalid, Confidence: 0.4,
		Reasons: []string{"claim.output disagrees"}, Evidence: router.ValidateEvidence{Runs: []router.Run{}, Scores: []router.Score{}}}, nil
}

func (s *fakeService) DelegateV3(ctx context.Context, req *router.DelegateV3Request) (*router.DelegateV3Response, error) {
	if resp, err, ok := s.enter(ctx, router.OpDelegateV3, req); ok {
		return answer[router.DelegateV3Response](resp, err)
	}
	return &router.DelegateV3Response{TaskID: "t3", Result: json.RawMessage(`{"a":1}`),
		Consensus: router.ConsensusResponse{Replicas: req.Consensus.Replicas, Agreement: 1, Strategy: router.AggregationMajority}}, nil
}

func (s *fakeService) ValidateV3(ctx context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	if resp, err, ok := s.enter(ctx, router.OpValidateV3, req); ok {
		return answer[router.ValidateV3Response](resp, err)
	}
	labels := make([]router.Label, req.Consensus.Replicas)
	for i := range labels {
		labels[i] = router.Label(router.VerdictValid)
	}
	return &router.ValidateV3Response{RequestID: req.RequestID, Verdict: router.VerdictValid, Confidence: 0.8, Reasons: []string{"agree"},
		Consensus: router.ConsensusResponse{Replicas: req.Consensus.Replicas, Agreement: 1, Verdicts: labels, Strategy: router.AggregationMajority, Confidence: 0.8}}, nil
}

func (s *fakeService) Factcheck(ctx context.Context, req *router.FactcheckRequest) (*router.FactcheckResponse, error) {
	if resp, err, ok := s.enter(ctx, router.OpFactcheck, req); ok {
		return answer[router.FactcheckResponse](resp, err)
	}
	return &router.FactcheckResponse{RequestID: req.RequestID, Verdict: router.VerdictTrue, Confidence: 0.7,
		Consensus: router.ConsensusResponse{Replicas: req.Consensus.Replicas, Agreement: 1, Strategy: router.AggregationMajority}}, nil
}

func (s *fakeService) FactcheckV1(ctx context.Context, req *router.FactcheckV1Request) (*router.FactcheckResponse, error) {
	if resp, err, ok := s.enter(ctx, router.OpFactcheckV1, req); ok {
		return answer[router.FactcheckResponse](resp, err)
	}
	replicas := req.Policy.Redundancy
	if replicas == 0 {
		replicas = router.Replicas3
	}
	return &router.FactcheckResponse{RequestID: req.RequestID, Verdict: router.VerdictFalse, Confidence: 0.6,
		Consensus: router.ConsensusResponse{Replicas: replicas, Agreement: 1, Strategy: router.AggregationMajority}}, nil
}

// Feedback implements router.FeedbackReporter: it counts the report.
func (s *fakeService) Feedback(ctx context.Context, traceID string, right bool) error {
	_, err, _ := s.enter(ctx, router.OpFeedback, &router.FeedbackRequest{TraceID: traceID, Right: &right})
	return err
}

// validBodies holds a valid request body for each operation.
var validBodies = map[router.Operation]string{
	router.OpDelegateV1:  `{"session_id":1,"task_request_input":"say hi"}`,
	router.OpValidateV1:  `{"session_id":1,"task_request_input":"2+2","task_result_output":"4"}`,
	router.OpDelegateV2:  `{"session_id":1,"objective":"summarize","input":{"text":"x"}}`,
	router.OpValidateV2:  `{"session_id":1,"request_id":"r1","claim":{"type":"summary","output":"s"},"policy":{"tier":"fast"}}`,
	router.OpDelegateV3:  `{"objective":"summarize","consensus":{"replicas":3}}`,
	router.OpValidateV3:  `{"claim":{"type":"summary","output":"s"},"consensus":{"replicas":3,"disagreement_policy":"fail_hard"}}`,
	router.OpFactcheck:   `{"claim":"water is wet","consensus":{"replicas":3}}`,
	router.OpFactcheckV1: `{"claim":"the moon is cheese","mode":"realtime","session_pool":["1",2,"3"]}`,
	router.OpFeedback:    `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","right":true}`,
}

// requestFor decodes the valid body of op into its request type.
func requestFor(op router.Operation) any {
	var v any
	switch op {
	case router.OpDelegateV1:
		v = new(router.DelegateV1Request)
	case router.OpValidateV1:
		v = new(router.ValidateV1Request)
	case router.OpDelegateV2:
		v = new(router.DelegateV2Request)
	case router.OpValidateV2:
		v = new(router.ValidateV2Request)
	case router.OpDelegateV3:
		v = new(router.DelegateV3Request)
	case router.OpValidateV3:
		v = new(router.ValidateV3Request)
	case router.OpFactcheck:
		v = new(router.FactcheckRequest)
	case router.OpFactcheckV1:
		v = new(router.FactcheckV1Request)
	case router.OpFeedback:
		v = new(router.FeedbackRequest)
	}
	if err := json.Unmarshal([]byte(validBodies[op]), v); err != nil {
		panic(err)
	}
	return v
}
