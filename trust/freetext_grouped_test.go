package trust_test

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// factVector is what the stand-in embeddings endpoint encodes: each fact
// the probe asks about (the laureate, the year, the prize) that an answer
// states is a unit direction of its own, and its wording adds a small
// direction (0.25) picked by a hash of the text. Answers stating the same
// facts in other words are then about 0.98 similar; an answer changing one
// of the three facts about 0.65: a model that separates facts.
func factVector(text string) []float64 {
	v := make([]float64, 16)
	for i, fact := range []string{"Marie Curie", "Rutherford", "1903", "1911", "hysics"} {
		if strings.Contains(text, fact) {
			v[i] = 1
		}
	}
	h := fnv.New32a()
	h.Write([]byte(text))
	v[5+h.Sum32()%11] += 0.25
	return v
}

func probeGrouper(t *testing.T) (*embedkey.Grouper, *embedkeytest.Server) {
	t.Helper()
	srv := embedkeytest.NewServer(factVector)
	t.Cleanup(srv.Close)
	// The stand-in separates facts itself; embedkey's lexical guard, held
	// to its own tests, is off so that these see the service's grouping
	// of reworded answers.
	g, err := embedkey.New(embedkey.Config{BaseURL: srv.URL + "/v1", Model: "stand-in", DisableGuard: true})
	if err != nil {
		t.Fatal(err)
	}
	return g, srv
}

// TestService_Call_probeGrouped is the five-wordings probe with the
// outputs grouped by embeddings (WithGrouper): VALID with one of the five
// answers at safe and adaptive, and an answer changing the year or the
// laureate is never in the winning group.
func TestService_Call_probeGrouped(t *testing.T) {
	for _, tc := range probeCases() {
		for _, p := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				g, _ := probeGrouper(t)
				s, err := trust.New(probeEngine(t, tc.answers), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithGrouper(g))
				if err != nil {
					t.Fatal(err)
				}
				resp := callProbe(t, s, probeRequest(p, ""), tc)
				gr := resp.Evidence.Grouping
				if gr == nil || gr.Threshold != embedkey.DefaultThreshold || len(gr.Groups) != len(resp.Evidence.Verdicts) {
					t.Fatalf("grouping %+v, want one group per run at the default threshold", gr)
				}
				for _, pr := range gr.Pairs {
					if (gr.Groups[pr.A] == gr.Groups[pr.B]) && pr.Value < gr.Threshold {
						t.Errorf("pair %+v grouped below the threshold", pr)
					}
				}
				if tc.wrong == "" {
					return
				}
				// Session 1 holds the changed answer.
				r := runIndex(resp, 1)
				if r < 0 {
					return // it was not run: adaptive settled first
				}
				if gr.Groups[r] == gr.Groups[winnerRun(resp)] {
					t.Errorf("run %d (the changed answer) counted as agreeing: groups %v", r, gr.Groups)
				}
				if !slices.ContainsFunc(resp.Evidence.Disagreements, func(d trust.Disagreement) bool { return d.Replica == r }) {
					t.Errorf("run %d (the changed answer) is not listed as a disagreement", r)
				}
			})
		}
	}
}

// runIndex is the index among every run of the run on session id, -1
// when none ran there.
func runIndex(resp *trust.Response, id router.SessionID) int {
	n := 0
	for _, st := range resp.Evidence.Steps {
		for _, s := range st.Sessions {
			if s == id {
				return n
			}
			n++
		}
	}
	return -1
}

// winnerRun is the first run that answered and is not a disagreement:
// one of the winning group.
func winnerRun(resp *trust.Response) int {
	for i, l := range resp.Evidence.Verdicts {
		if l == router.LabelOK && !slices.ContainsFunc(resp.Evidence.Disagreements, func(d trust.Disagreement) bool { return d.Replica == i }) {
			return i
		}
	}
	return -1
}

// TestService_Call_groupingFails ends the call with 500 when the
// embeddings endpoint fails after the runs ran: not a 502, which a
// client would retry, running them again.
func TestService_Call_groupingFails(t *testing.T) {
	srv := embedkeytest.NewServer(func(string) []float64 { return nil }) // empty vectors: a bad reply
	defer srv.Close()
	g, err := embedkey.New(embedkey.Config{BaseURL: srv.URL + "/v1", Model: "stand-in", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(probeEngine(t, wordings), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithGrouper(g))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Call(context.Background(), probeRequest(trust.PolicySafe, ""))
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusInternalServerError || p.Code != problem.CodeInternal || !strings.Contains(p.Detail, "embedkey") {
		t.Fatalf("err = %v, want 500 internal naming the grouper's error", err)
	}
}

// TestService_groupedLearnsMeaning: a grouped delegation teaches the
// reputation book by its groups, not by the router's exact answer key:
// five sessions that say the same in other words keep their reliability
// at safe (one router call of three), as at adaptive, instead of each
// being learned as outvoted.
func TestService_groupedLearnsMeaning(t *testing.T) {
	for _, p := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
		t.Run(string(p), func(t *testing.T) {
			g, _ := probeGrouper(t)
			e := probeEngine(t, wordings)
			s, err := trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithGrouper(g))
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				resp, err := s.Call(context.Background(), probeRequest(p, ""))
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status != trust.StatusValid {
					t.Fatalf("status %s, want VALID", resp.Status)
				}
			}
			rel, err := e.Reputation().Reliabilities(context.Background(), router.Scope(router.KindDelegate, "qa"), []int64{1, 2, 3, 4, 5})
			if err != nil {
				t.Fatal(err)
			}
			prior := e.Reputation().Options().Prior.Mean()
			for id, r := range rel.Sessions {
				if r < prior {
					t.Errorf("session %d reads %.3f after agreeing in meaning every time, below the prior %.3f", id, r, prior)
				}
			}
		})
	}
}

// stuckGrouper groups nothing: it waits for its context to end and
// returns its error, as a grouper does whose endpoint never answers.
type stuckGrouper struct{}

func (stuckGrouper) Group(ctx context.Context, _ []json.RawMessage) (*consensus.Grouping, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestService_Call_groupingPastDeadline: runs that answered before the
// caller's deadline, and a grouper still working at it, end the call
// with a 504 *trust.Error with code timeout saying the grouping did not
// finish, not with a bare context error: the runs ran, and a client does
// not retry a 504 timeout.
func TestService_Call_groupingPastDeadline(t *testing.T) {
	a := routertest.Answer("a")
	for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicyAdaptive} {
		t.Run(string(p), func(t *testing.T) {
			s, err := trust.New(newEngine(t, a, a, a), trust.WithGrouper(stuckGrouper{}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			_, err = s.Call(ctx, &trust.Request{Mode: trust.ModeDelegation, Policy: p,
				Task: trust.Task{Type: "qa", Input: router.NewStringInput("x")}})
			var terr *trust.Error
			if !errors.As(err, &terr) || terr.Status != http.StatusGatewayTimeout || terr.Code != problem.CodeTimeout ||
				!strings.Contains(terr.Detail, "grouping") {
				t.Errorf("err %v (%T), want a 504 *trust.Error with code timeout about the grouping", err, err)
			}
		})
	}
}
