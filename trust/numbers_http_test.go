package trust_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestNumbers_overLoopback makes the calls of
// TestNumbers_recomputedFromResponse over real loopback HTTP: a
// trust.Client to trust.NewHandler, over a trust.Service on a
// router.Client to router.NewHandler, over an engine of fast, slow,
// failing, hanging and oddly confident workers. Every number the
// response states is recomputed from the response as it came over the
// wire, and its receipt compared with it.
func TestNumbers_overLoopback(t *testing.T) {
	for _, p := range []panel{panels()[1], panels()[2], panels()[4], panels()[5]} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel() // each panel its own engine and servers
			numbersOverLoopback(t, p)
		})
	}
}

// numbersOverLoopback runs TestNumbers_overLoopback's calls on panel p.
func numbersOverLoopback(t *testing.T, p panel) {
	ws := make([]router.Worker, len(p.workers))
	for i, v := range p.workers {
		ws[i] = v
	}
	e, err := router.NewEngine(routertest.Sessions(1, 5, ws...), router.WithReplicaTimeout(250*time.Millisecond),
		router.WithStopGrace(200*time.Millisecond), router.WithHealth(1000, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rh, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"rk": "trust"})))
	if err != nil {
		t.Fatal(err)
	}
	rsrv := httptest.NewServer(rh)
	defer rsrv.Close()
	rc, err := router.NewClient(rsrv.URL, router.WithAPIKey("rk"))
	if err != nil {
		t.Fatal(err)
	}
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(rc, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	th, err := trust.NewHandler(s, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"tk": "alice"})))
	if err != nil {
		t.Fatal(err)
	}
	tsrv := httptest.NewServer(th)
	defer tsrv.Close()
	tc, err := trust.NewClient(tsrv.URL, trust.WithAPIKey("tk"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeArbitration, trust.ModeDelegation} {
		for _, numeric := range []bool{false, true} {
			if numeric && mode != trust.ModeDelegation {
				continue
			}
			for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
				t.Run(fmt.Sprintf("%s/numeric=%v/%s", mode, numeric, policy), func(t *testing.T) {
					resp, err := tc.Call(context.Background(), numbersRequest(mode, policy, numeric))
					if err != nil {
						checkFailure(t, err)
						return
					}
					checkNumbers(t, resp, false)
					checkReceipt(t, resp, policy)
					checkLabels(t, p, resp)
				})
			}
		}
	}
}
