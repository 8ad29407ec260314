package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// foldCase is an answer key under which outputs agree when they are the
// same string but for case and surrounding white space.
func foldCase(answer any) (string, error) {
	raw, ok := answer.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(answer)
		if err != nil {
			return "", err
		}
		raw = b
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw), nil
	}
	return strings.ToLower(strings.TrimSpace(s)), nil
}

// keyPanels are panels whose outputs agree under foldCase but not as
// bytes: the router, which counts bytes, picks another winner than the
// service, or none.
func keyPanels() []panel {
	return []panel{
		{"one apart", []voter{yes("Lyon"), yes("paris"), yes("PARIS"), yes("Paris"), yes("paris ")}},
		{"all alike", []voter{yes("Paris"), yes("paris"), yes("PARIS"), yes("Paris"), yes("paris ")}},
	}
}

// keyEngine is an engine of p's five sessions counting outputs by the
// default key, with reputation on or off.
func keyEngine(t *testing.T, p panel, reputationOn bool) *router.Engine {
	t.Helper()
	ws := make([]router.Worker, len(p.workers))
	for i, v := range p.workers {
		ws[i] = v
	}
	opts := []router.EngineOption{router.WithReplicaTimeout(250 * time.Millisecond), router.WithHealth(1000, time.Millisecond)}
	if !reputationOn {
		opts = append(opts, router.WithReputation(nil))
	}
	e, err := router.NewEngine(routertest.Sessions(1, 5, ws...), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestNumbers_answerKeyResult: a service counting outputs by its own
// answer key (WithAnswerKey) over a router counting them as bytes, in
// process and over loopback HTTP, states as its result an output of a
// run that backs the winner, and answers VALID exactly when its tier's
// rule accepts what the response records.
func TestNumbers_answerKeyResult(t *testing.T) {
	for _, p := range keyPanels() {
		for _, rep := range []bool{false, true} {
			for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
				t.Run(fmt.Sprintf("%s/rep=%v/%s/engine", p.name, rep, policy), func(t *testing.T) {
					s := newKeyService(t, keyEngine(t, p, rep))
					resp, err := s.Call(context.Background(), numbersRequest(trust.ModeDelegation, policy, false))
					if err != nil {
						t.Fatal(err)
					}
					checkKeyed(t, p, resp, policy, rep)
				})
			}
		}
		for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
			t.Run(fmt.Sprintf("%s/%s/loopback", p.name, policy), func(t *testing.T) {
				resp, err := keyClient(t, p).Call(context.Background(), numbersRequest(trust.ModeDelegation, policy, false))
				if err != nil {
					t.Fatal(err)
				}
				checkKeyed(t, p, resp, policy, false)
			})
		}
	}
}

// keyClient is a trust.Client to trust.NewHandler over loopback HTTP, on
// a service counting outputs by foldCase over a router.Client to
// router.NewHandler of an engine of p's sessions without reputation.
func keyClient(t *testing.T, p panel) *trust.Client {
	t.Helper()
	rh, err := router.NewHandler(keyEngine(t, p, false), router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"rk": "trust"})))
	if err != nil {
		t.Fatal(err)
	}
	rsrv := httptest.NewServer(rh)
	t.Cleanup(rsrv.Close)
	rc, err := router.NewClient(rsrv.URL, router.WithAPIKey("rk"))
	if err != nil {
		t.Fatal(err)
	}
	th, err := trust.NewHandler(newKeyService(t, rc), trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"tk": "alice"})))
	if err != nil {
		t.Fatal(err)
	}
	tsrv := httptest.NewServer(th)
	t.Cleanup(tsrv.Close)
	tc, err := trust.NewClient(tsrv.URL, trust.WithAPIKey("tk"))
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// newKeyService is a service with signed receipts over r, on the pool of
// sessions 1 to 5 in order, that counts delegation outputs by foldCase.
func newKeyService(t *testing.T, r router.Service) *trust.Service {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(r, trust.WithAnswerKey(foldCase), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkKeyed checks resp, a delegation of panel p at policy counted by
// foldCase: its numbers recomputed from it, its result the output of a
// run that backs the winner (a VALID one, as it arrived), and its status
// VALID exactly when the tier's rule accepts the counts it records.
func checkKeyed(t *testing.T, p panel, resp *trust.Response, policy trust.Policy, rep bool) {
	t.Helper()
	rc := checkNumbers(t, resp, rep)
	checkDecision(t, resp, policy)
	ev := resp.Evidence
	dissent := map[int]bool{}
	for _, d := range ev.Disagreements {
		dissent[d.Replica] = true
	}
	want, err := foldCase(resp.Result)
	if err != nil {
		t.Fatal(err)
	}
	var backers []json.RawMessage
	i := 0
	for _, st := range ev.Steps {
		for _, id := range st.Sessions {
			if !dissent[i] && ev.Verdicts[i] == router.LabelOK {
				out, _ := json.Marshal(p.workers[id-1].output)
				backers = append(backers, out)
				if k, _ := foldCase(json.RawMessage(out)); k != want {
					t.Errorf("run %d on session %d backs the winner with %s, the result is %s", i, id, out, resp.Result)
				}
			}
			i++
		}
	}
	if resp.Status == trust.StatusValid {
		found := false
		for _, b := range backers {
			found = found || string(b) == string(resp.Result)
		}
		if !found {
			t.Errorf("VALID result %s is none of its backers' outputs %s", resp.Result, backers)
		}
	}
	if policy == trust.PolicyOracle {
		accepted := len(ev.Disagreements) == 0 && 2*rc.answered > ev.Launched
		if accepted != (resp.Status == trust.StatusValid) {
			t.Errorf("oracle: %d of %d answered, %d disagreements; status %s", rc.answered, ev.Launched, len(ev.Disagreements), resp.Status)
		}
	}
}
