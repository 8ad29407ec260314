package agentcard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/agentcard"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(agentcard.Handler(agentcard.Config{}))
	defer srv.Close()

	resp, err := http.Get(srv.URL + agentcard.WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET: %s %s, want 200 application/json", resp.Status, resp.Header.Get("Content-Type"))
	}
	// Every member the A2A AgentCard requires, by its JSON name.
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"name", "description", "url", "preferredTransport", "additionalInterfaces", "version", "protocolVersion", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		if _, ok := raw[member]; !ok {
			t.Errorf("card lacks %s", member)
		}
	}
	var card agentcard.Card
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	if card.URL != srv.URL+agentcard.DefaultA2APath || card.Version != trust.Version || !strings.Contains(card.Description, srv.URL+"/mcp") {
		t.Errorf("card url %q version %q description %q: want the server's A2A endpoint, trust.Version, and the MCP endpoint", card.URL, card.Version, card.Description)
	}
	want := []agentcard.Interface{{URL: card.URL, Transport: agentcard.TransportJSONRPC}}
	if diff := cmp.Diff(want, card.AdditionalInterfaces); card.PreferredTransport != agentcard.TransportJSONRPC || diff != "" {
		t.Errorf("preferredTransport %q, additionalInterfaces (-want +got):\n%s", card.PreferredTransport, diff)
	}
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
		if s.Name == "" || s.Description == "" || len(s.Examples) == 0 || len(s.Tags) == 0 {
			t.Errorf("skill %+v: want a name, a description, tags and examples", s)
		}
	}
	if diff := cmp.Diff([]string{"validate_claim", "delegate_task", "arbitrate", "factcheck"}, ids); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
}

func TestHandler_baseURLAndMethods(t *testing.T) {
	h := agentcard.Handler(agentcard.Config{BaseURL: "https://vouch.example/", Name: "acme vouch", MCPPath: "/mcp/messages", A2APath: "/api/v1/a2a"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, agentcard.APIPath, nil))
	var card agentcard.Card
	if err := json.Unmarshal(rec.Body.Bytes(), &card); err != nil {
		t.Fatal(err)
	}
	if card.URL != "https://vouch.example/api/v1/a2a" || card.Name != "acme vouch" || !strings.Contains(card.Description, "https://vouch.example/mcp/messages") {
		t.Errorf("card %+v: want the configured base URL, name and MCP path", card)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, agentcard.APIPath, strings.NewReader("{}")))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" || !strings.Contains(string(body), "method_not_allowed") {
		t.Errorf("POST: %d %q %s, want a 405 problem with Allow", rec.Code, rec.Header().Get("Allow"), body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, agentcard.WellKnownPath, nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD: %d with %d bytes, want 200 and no body", rec.Code, rec.Body.Len())
	}
}

// The card carries A2A 1.0's members beside 0.3's: supportedInterfaces
// names the JSON-RPC interface in 1.0 first (the preferred one) and in
// 0.3, both at the card's url; the 1.0 capabilities and security
// requirements are there, the 0.3 members unchanged.
func TestNew_v1Members(t *testing.T) {
	card := agentcard.New(agentcard.Config{}, "https://vouch.example")
	want := []agentcard.AgentInterface{
		{URL: "https://vouch.example/a2a", ProtocolBinding: agentcard.TransportJSONRPC, ProtocolVersion: agentcard.A2AVersion10},
		{URL: "https://vouch.example/a2a", ProtocolBinding: agentcard.TransportJSONRPC, ProtocolVersion: agentcard.A2AVersion03},
	}
	if diff := cmp.Diff(want, card.SupportedInterfaces); diff != "" {
		t.Errorf("supportedInterfaces (-want +got):\n%s", diff)
	}
	raw, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	var members struct {
		Capabilities         map[string]any   `json:"capabilities"`
		SecurityRequirements []map[string]any `json:"securityRequirements"`
		ProtocolVersion      string           `json:"protocolVersion"`
		URL                  string           `json:"url"`
	}
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"streaming": false, "pushNotifications": false, "stateTransitionHistory": false, "extendedAgentCard": false}, members.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]map[string]any{{"schemes": map[string]any{"bearer": map[string]any{"list": []any{}}}}}, members.SecurityRequirements); diff != "" {
		t.Errorf("securityRequirements (-want +got):\n%s", diff)
	}
	if members.ProtocolVersion != agentcard.ProtocolVersion || members.URL != "https://vouch.example/a2a" {
		t.Errorf("0.3 members protocolVersion %q url %q, want %q and the endpoint", members.ProtocolVersion, members.URL, agentcard.ProtocolVersion)
	}
}
