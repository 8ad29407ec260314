// Package agentcard publishes an A2A agent card for a vouch trust service:
// the discovery document that agents read at GET /.well-known/agent.json
// to learn what a service does and how to reach it.
//
// The card follows the AgentCard object of the A2A protocol (version
// 0.3): name, description, url, version, protocolVersion, capabilities,
// security schemes, default input and output modes, and one skill per
// operation of the trust service, each with examples. The skill ids are
// the names of the MCP tools of package trustmcp (validate_claim,
// delegate_task, arbitrate, factcheck, get_receipt, verify_receipt), so an
// agent that found a skill here calls the tool of the same name.
//
// vouch serves its operations over MCP (Streamable HTTP, at the path
// Config.MCPPath) and over plain HTTP (POST /api/v4/trust); it does not
// implement A2A's own message protocol (message/send and tasks). The card
// is a discovery document: its description and each skill say where the
// operation is served, and its url is the service's base URL.
//
// The package has no dependency beyond the standard library and trust, so
// any host can publish the card of the service it embeds.
package agentcard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/vouchkit/vouch/internal/problem"
	"github.com/vouchkit/vouch/trust"
)

// The paths the card is usually served at: the A2A well-known path, and
// the public router's path for it.
const (
	WellKnownPath = "/.well-known/agent.json"
	APIPath       = "/api/v1/a2a/agent.json"
)

// ProtocolVersion is the A2A protocol version whose AgentCard the card
// follows.
const ProtocolVersion = "0.3.0"

// Card is an A2A AgentCard.
type Card struct {
	// Name is the service's name.
	Name string `json:"name"`
	// Description says what the service does and where its skills are served.
	Description string `json:"description"`
	// URL is the service's base URL.
	URL string `json:"url"`
	// Version is the service's release.
	Version string `json:"version"`
	// ProtocolVersion is the A2A version the card follows.
	ProtocolVersion string `json:"protocolVersion"`
	// DocumentationURL points to the service's documentation, if any.
	DocumentationURL string `json:"documentationUrl,omitempty"`
	// Capabilities are the optional A2A features supported: none.
	Capabilities Capabilities `json:"capabilities"`
	// SecuritySchemes name the credentials the service takes.
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	// Security lists the schemes a call must satisfy.
	Security []map[string][]string `json:"security,omitempty"`
	// DefaultInputModes are the media types the skills take.
	DefaultInputModes []string `json:"defaultInputModes"`
	// DefaultOutputModes are the media types the skills answer.
	DefaultOutputModes []string `json:"defaultOutputModes"`
	// Skills are what the service does, one per operation.
	Skills []Skill `json:"skills"`
}

// Capabilities are the optional A2A protocol features an agent supports.
type Capabilities struct {
	// Streaming is A2A message streaming.
	Streaming bool `json:"streaming"`
	// PushNotifications are A2A task push notifications.
	PushNotifications bool `json:"pushNotifications"`
	// StateTransitionHistory is A2A task state history.
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

// SecurityScheme is an OpenAPI security scheme, as the card names the
// credentials it takes.
type SecurityScheme struct {
	// Type is the OpenAPI scheme type, such as "http".
	Type string `json:"type"`
	// Scheme is the HTTP authentication scheme, such as "bearer".
	Scheme string `json:"scheme,omitempty"`
	// Description tells a person what to send.
	Description string `json:"description,omitempty"`
}

// Skill is one thing the agent does.
type Skill struct {
	// ID names the skill: the name of the MCP tool that performs it.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Tags are keywords for discovery.
	Tags []string `json:"tags"`
	// Examples are sample requests, in words and as tool arguments.
	Examples []string `json:"examples"`
	// InputModes override DefaultInputModes for the skill.
	InputModes []string `json:"inputModes,omitempty"`
	// OutputModes override DefaultOutputModes for the skill.
	OutputModes []string `json:"outputModes,omitempty"`
}

// Config describes the service the card announces. The zero value is
// usable: the card of a vouch trust service with every skill, at the
// base URL of each request.
type Config struct {
	// Name of the service; empty means "vouch".
	Name string
	// Description of the service; empty means the description of vouch.
	Description string
	// BaseURL is the service's base URL, such as "https://vouch.example".
	// Empty means the scheme and Host of each request, which suits a
	// server that knows its address only once it listens.
	BaseURL string
	// Version is the service's release; empty means trust.Version.
	Version string
	// MCPPath is the path of the MCP endpoint that the skills name; empty
	// means "/mcp".
	MCPPath string
	// Skills are the card's skills; nil means [Skills]().
	Skills []Skill
}

// Skills returns one skill per operation of the trust service, with the
// ids of the trustmcp tools.
func Skills() []Skill {
	return []Skill{
		{ID: "validate_claim", Name: "Validate a claimed result",
			Description: "Re-run or cross-check a claimed result on up to 5 independent workers before acting, paying or settling on it; answers VALID, INVALID, RETRY or NEEDS_SPEC with a confidence, evidence and on request a signed receipt. Tiers: fast 1 run, safe 3, oracle 5, adaptive at most 5, stopping once the pooled runs settle it.",
			Tags:        []string{"validation", "verification", "consensus", "trust"},
			Examples:    []string{`Is "17 * 3 = 51" a correct answer to "What is 17 * 3?"`, `{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?","policy":"safe","receipt":"inline"}`}},
		{ID: "delegate_task", Name: "Delegate a task",
			Description: "Have independent workers carry out a task and return the result a majority backs, with the evidence of how it was reached.",
			Tags:        []string{"delegation", "consensus"},
			Examples:    []string{"Compute 17 * 3 on three independent workers.", `{"objective":"multiply","input":"17 * 3","policy":"safe"}`}},
		{ID: "arbitrate", Name: "Arbitrate a dispute",
			Description: "Decide a buyer-seller dispute over a delivered result: SELLER_VALID, SELLER_INVALID or INCONCLUSIVE, with evidence and on request a signed receipt.",
			Tags:        []string{"arbitration", "dispute", "marketplace"},
			Examples:    []string{`The seller delivered "17 * 3 = 50"; the buyer says it is wrong. Who is right?`, `{"claimed_result":"17 * 3 = 50","dispute_context":{"buyer":"the product is wrong"},"policy":"oracle"}`}},
		{ID: "factcheck", Name: "Fact-check a statement",
			Description: "Check whether a statement is true on 3 or 5 independent runs; answers TRUE or FALSE with the consensus block and per-run evidence.",
			Tags:        []string{"factcheck", "consensus"},
			Examples:    []string{"Is it true that 17 * 3 = 51?", `{"claim":"17 * 3 = 51","replicas":5}`}},
		{ID: "get_receipt", Name: "Fetch a receipt",
			Description: "Fetch a receipt of an earlier decision by its receipt_id: the caller's own receipts, and shared receipts that name it.",
			Tags:        []string{"receipt", "audit"},
			Examples:    []string{`{"receipt_id":"rcpt_…"}`}},
		{ID: "verify_receipt", Name: "Verify a receipt",
			Description: "Check a receipt's schema, Ed25519 signature and expiry, and report each check.",
			Tags:        []string{"receipt", "signature", "audit"},
			Examples:    []string{"Is this receipt genuine and still valid?", `{"receipt":{"receipt_id":"rcpt_…","signing":{"…":"…"}}}`}},
	}
}

// New returns the card of cfg for a service at baseURL (which overrides
// cfg.BaseURL when not empty).
func New(cfg Config, baseURL string) Card {
	if baseURL == "" {
		baseURL = cfg.BaseURL
	}
	baseURL = strings.TrimSuffix(baseURL, "/")
	mcpPath := cfg.MCPPath
	if mcpPath == "" {
		mcpPath = "/mcp"
	}
	c := Card{
		Name:            cfg.Name,
		Description:     cfg.Description,
		URL:             baseURL,
		Version:         cfg.Version,
		ProtocolVersion: ProtocolVersion,
		SecuritySchemes: map[string]SecurityScheme{"bearer": {Type: "http", Scheme: "bearer",
			Description: "the integration's API key, as Authorization: Bearer <key>"}},
		Security:           []map[string][]string{{"bearer": {}}},
		DefaultInputModes:  []string{"application/json", "text/plain"},
		DefaultOutputModes: []string{"application/json"},
		Skills:             cfg.Skills,
	}
	if c.Name == "" {
		c.Name = "vouch"
	}
	if c.Description == "" {
		c.Description = "Delegates AI work to independent workers and validates claimed results before anyone acts, pays or settles on them: " +
			"1, 3 or 5 replicas (under the adaptive tier, as few as settle the call, at most 5), their agreement as a status, a confidence, evidence and a signed receipt."
	}
	c.Description += " Skills are MCP tools of the same name at " + baseURL + mcpPath +
		" (Streamable HTTP); the trust call is also POST " + baseURL + trust.CallPath + "."
	if c.Version == "" {
		c.Version = trust.Version
	}
	if c.Skills == nil {
		c.Skills = Skills()
	}
	return c
}

// Handler serves the card of cfg as JSON to GET and HEAD requests, with
// the request's scheme and Host as the base URL when cfg.BaseURL is
// empty. It answers 405 to other methods.
func Handler(cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			problem.Write(w, problem.New(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed, "the agent card is read with GET"))
			return
		}
		base := cfg.BaseURL
		if base == "" {
			scheme := "http"
			if r.TLS != nil {
				scheme = "https"
			}
			base = scheme + "://" + r.Host
		}
		var body bytes.Buffer
		enc := json.NewEncoder(&body)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(New(cfg, base)); err != nil {
			problem.Write(w, problem.New(http.StatusInternalServerError, problem.CodeInternal, "encoding the agent card failed"))
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodGet {
			w.Write(body.Bytes())
		}
	})
}
