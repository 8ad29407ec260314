package trusta2a_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	vouchcard "github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// The keys of the test server's integrations.
var keys = map[string]string{"demo-key": "demo", "acme-key": "acme"}

// fixture is a trust service with signed receipts, served over A2A on
// loopback HTTP with its agent card, behind the keys. Its sessions run
// the workers given, one a session, or else five routertest.Arithmetic.
type fixture struct {
	url      string // the server's base URL
	verifier *receipt.Verifier
	rec      *telemetrytest.Recorder
	hc       *http.Client
}

func newFixture(t *testing.T, cfg trusta2a.Config, workers ...router.Worker) *fixture {
	t.Helper()
	if len(workers) == 0 {
		workers = []router.Worker{routertest.Arithmetic(), routertest.Arithmetic(), routertest.Arithmetic(), routertest.Arithmetic(), routertest.Arithmetic()}
	}
	var ss []router.Session
	for i, w := range workers {
		ss = append(ss, router.Session{ID: router.SessionID(i + 1), Pool: fmt.Sprint("pool", i+1), Worker: w})
	}
	engine, err := router.NewEngine(ss)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	rec := telemetrytest.New(t)
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}),
		trust.WithSignedReceipts(), trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Caller, cfg.Router, cfg.Authenticator = svc, engine, router.KeyAuthenticator(keys)
	h, err := trusta2a.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(vouchcard.DefaultA2APath, h)
	mux.Handle(vouchcard.WellKnownPath, vouchcard.Handler(vouchcard.Config{}))
	srv := httptest.NewServer(mux)
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.Close()
		h.Close()
	})
	return &fixture{url: srv.URL, verifier: verifier, rec: rec, hc: hc}
}

// bearer sends its key, and any other headers, with every call.
type bearer struct {
	a2aclient.PassthroughInterceptor
	key     string
	headers map[string]string
}

func (b bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, error) {
	req.Meta["Authorization"] = []string{"Bearer " + b.key}
	for k, v := range b.headers {
		req.Meta[k] = []string{v}
	}
	return ctx, nil
}

// client resolves the server's card and returns an A2A client of it that
// sends key and headers.
func (f *fixture) client(t *testing.T, key string, headers map[string]string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.NewResolver(f.hc).Resolve(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(f.hc),
		a2aclient.WithInterceptors(bearer{key: key, headers: headers}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

// send sends a user message of parts and returns the task it answers.
func send(t *testing.T, c *a2aclient.Client, parts ...a2a.Part) (*a2a.Task, error) {
	t.Helper()
	res, err := c.SendMessage(context.Background(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send answered a %T, want a task", res)
	}
	return task, nil
}

// answer returns the data part of a completed task's artifact, and the
// artifact's name (the skill).
func answer(t *testing.T, task *a2a.Task) (map[string]any, string) {
	t.Helper()
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("task %s with %d artifacts (%+v), want completed with one", task.Status.State, len(task.Artifacts), task.Status.Message)
	}
	for _, p := range task.Artifacts[0].Parts {
		if d, ok := p.(a2a.DataPart); ok {
			return d.Data, task.Artifacts[0].Name
		}
	}
	t.Fatalf("the artifact has no data part: %+v", task.Artifacts[0].Parts)
	return nil, ""
}
