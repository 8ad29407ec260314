package trusta2a_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// A trust service on three workers, served over A2A with its agent card,
// and asked by an A2A client whether a claimed result holds.
func ExampleNewHandler() {
	var sessions []router.Session
	for i := 1; i <= 3; i++ {
		sessions = append(sessions, router.Session{ID: router.SessionID(i), Worker: routertest.Arithmetic()})
	}
	engine, err := router.NewEngine(sessions)
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	h, err := trusta2a.NewHandler(trusta2a.Config{Caller: svc, Router: engine})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close() // once served no more: ends the calls made after answering
	mux := http.NewServeMux()
	mux.Handle(agentcard.DefaultA2APath, h)
	mux.Handle(agentcard.WellKnownPath, agentcard.Handler(agentcard.Config{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	client, err := a2aclient.NewFromEndpoints(ctx, []a2a.AgentInterface{{URL: srv.URL + agentcard.DefaultA2APath, Transport: a2a.TransportProtocolJSONRPC}},
		a2aclient.WithJSONRPCTransport(srv.Client()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser,
		a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 50" for the task "What is 17 * 3?"`})})
	if err != nil {
		log.Fatal(err)
	}
	task := res.(*a2a.Task)
	answer := task.Artifacts[0].Parts[0].(a2a.DataPart).Data
	fmt.Println(task.Status.State, task.Artifacts[0].Name, answer["status"], answer["evidence"].(map[string]any)["redundancy"])
	// Output:
	// completed validate_claim INVALID 3
}
