// Package agentcard publishes an A2A agent card for a vouch trust service:
// the discovery document that agents read at GET
// /.well-known/agent-card.json to learn what a service does and how to
// reach it.
//
// The card a client gets depends on the A2A version it names in the
// A2A-Version header, as the official A2A JavaScript SDK serves it. To a
// client that names none, or 0.3, it is one document for both versions:
// the AgentCard of version 0.3 (name,
// description, url, preferredTransport, additionalInterfaces, version,
// protocolVersion, capabilities, security schemes, default input and
// output modes, and one skill per trust operation: validate_claim,
// delegate_task, arbitrate, factcheck, each with examples of the messages
// it reads), and beside it the members of version 1.0 that differ:
// supportedInterfaces (the JSON-RPC interface in 1.0, the preferred one,
// then in 0.3), capabilities.extendedAgentCard and securityRequirements.
// A 1.0 client reads supportedInterfaces, a 0.3 client url; the security
// schemes keep 0.3's shape, which the 1.0 JavaScript client also reads.
// To a client that names 1.0, it is the card of 1.0 alone ([Card1]), which
// a client that refuses members it does not know also reads.
// Its url is where the host serves A2A's JSON-RPC transport (0.3's
// message/send, tasks/get and tasks/cancel, 1.0's SendMessage, GetTask,
// CancelTask and ListTasks), as package trusta2a does; the skill ids are
// also the names of the MCP tools of package trustmcp, which the
// description points to, with the receipt tools.
//
// The package has no dependency beyond the standard library and trust, so
// any host can publish the card of the service it embeds; the A2A SDK is
// linked only by the host that imports trusta2a.
package agentcard

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/trust"
)

// The paths the card is served at: the well-known path of A2A 0.3, which
// A2A clients read, the well-known path of earlier A2A versions, and the
// public router's path for it.
const (
	WellKnownPath       = "/.well-known/agent-card.json"
	LegacyWellKnownPath = "/.well-known/agent.json"
	APIPath             = "/api/v1/a2a/agent.json"
)

// Paths are the paths the card is served at, [WellKnownPath] first.
func Paths() []string { return []string{WellKnownPath, LegacyWellKnownPath, APIPath} }

// DefaultA2APath is the path of the A2A JSON-RPC endpoint when
// Config.A2APath is empty.
const DefaultA2APath = "/a2a"

// TransportJSONRPC is the A2A transport the card announces: JSON-RPC 2.0
// over HTTP.
const TransportJSONRPC = "JSONRPC"

// ProtocolVersion is the A2A protocol version whose AgentCard the card
// follows, its protocolVersion member (a 0.3 member).
const ProtocolVersion = "0.3.0"

// The A2A protocol versions of the card's supportedInterfaces, as
// Major.Minor.
const (
	A2AVersion10 = "1.0"
	A2AVersion03 = "0.3"
)

// Card is an A2A AgentCard.
type Card struct {
	// Name is the service's name.
	Name string `json:"name"`
	// Description says what the service does and where its skills are served.
	Description string `json:"description"`
	// URL is the A2A endpoint: where message/send and tasks/get are
	// served, over PreferredTransport.
	URL string `json:"url"`
	// PreferredTransport is the A2A transport served at URL: JSONRPC.
	PreferredTransport string `json:"preferredTransport"`
	// AdditionalInterfaces lists every transport served and its URL,
	// the one at URL included.
	AdditionalInterfaces []Interface `json:"additionalInterfaces"`
	// SupportedInterfaces lists every interface served, the preferred
	// first, each with its protocol binding and A2A version (a 1.0
	// member; 1.0 clients read it instead of URL).
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
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
	// Security lists the schemes a call must satisfy (a 0.3 member).
	Security []map[string][]string `json:"security,omitempty"`
	// SecurityRequirements lists the schemes a call must satisfy, in 1.0's
	// shape.
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
	// DefaultInputModes are the media types the skills take.
	DefaultInputModes []string `json:"defaultInputModes"`
	// DefaultOutputModes are the media types the skills answer.
	DefaultOutputModes []string `json:"defaultOutputModes"`
	// Skills are what the service does, one per operation.
	Skills []Skill `json:"skills"`
}

// Interface is one A2A transport and the URL it is served at.
type Interface struct {
	// URL is where the transport is served.
	URL string `json:"url"`
	// Transport is the A2A transport, such as "JSONRPC".
	Transport string `json:"transport"`
}

// AgentInterface is one interface of the agent, as A2A 1.0 names it: a
// URL, the protocol binding served there and the A2A version.
type AgentInterface struct {
	// URL is where the interface is served.
	URL string `json:"url"`
	// ProtocolBinding is the binding, such as "JSONRPC".
	ProtocolBinding string `json:"protocolBinding"`
	// ProtocolVersion is the A2A version, as Major.Minor: "1.0" or "0.3".
	ProtocolVersion string `json:"protocolVersion"`
}

// SecurityRequirement names the security schemes a call must satisfy,
// and the scopes of each, in A2A 1.0's shape.
type SecurityRequirement struct {
	// Schemes maps a scheme's name in SecuritySchemes to its scopes.
	Schemes map[string]StringList `json:"schemes"`
}

// StringList is a list of strings, as A2A 1.0 wraps one.
type StringList struct {
	// List holds the strings; never nil in a card, so it is written [].
	List []string `json:"list"`
}

// Capabilities are the optional A2A protocol features an agent supports.
type Capabilities struct {
	// Streaming is A2A message streaming.
	Streaming bool `json:"streaming"`
	// PushNotifications are A2A task push notifications.
	PushNotifications bool `json:"pushNotifications"`
	// StateTransitionHistory is A2A task state history (a 0.3 member).
	StateTransitionHistory bool `json:"stateTransitionHistory"`
	// ExtendedAgentCard is an extended card for authenticated clients (a
	// 1.0 member): none.
	ExtendedAgentCard bool `json:"extendedAgentCard"`
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
	// ID names the skill: also the name of the MCP tool that performs it.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Tags are keywords for discovery.
	Tags []string `json:"tags"`
	// Examples are messages the skill reads, each as written: a sentence
	// to send as a text part, or a JSON object of the skill's arguments
	// to send as a data part (or as text).
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
	// A2APath is the path of the A2A JSON-RPC endpoint, the card's url;
	// empty means [DefaultA2APath].
	A2APath string
	// Version is the service's release; empty means trust.Version.
	Version string
	// MCPPath is the path of the MCP endpoint that the skills name; empty
	// means "/mcp".
	MCPPath string
	// Skills are the card's skills; nil means [Skills]().
	Skills []Skill
}

// Skills returns one skill per trust operation, with the ids of the
// trustmcp tools. Each example is a message the skill reads as written:
// the sentences as a text part, the JSON objects as a data part (or as
// text). A data part may name its skill as "skill"; without it, the
// members say which skill it is (dispute_context: arbitrate;
// claimed_result: validate_claim; claim: factcheck; objective or input:
// delegate_task).
func Skills() []Skill {
	return []Skill{
		{ID: "validate_claim", Name: "Validate a claimed result",
			Description: "Re-run or cross-check a claimed result on up to 5 independent workers before acting, paying or settling on it; answers VALID, INVALID, RETRY or NEEDS_SPEC with a confidence, evidence and on request a signed receipt. Tiers: fast 1 run, safe 3 (the default), oracle 5, adaptive at most 5, stopping once the pooled runs settle it. Data part members: claimed_result (required), input, spec, policy, receipt (none, inline, detached).",
			Tags:        []string{"validation", "verification", "consensus", "trust"},
			Examples: []string{
				`Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?"`,
				`Is "17 * 3 = 50" a correct answer to "What is 17 * 3?"`,
				`Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?" with policy oracle and receipt inline`,
				`{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?","policy":"safe","receipt":"inline"}`,
			}},
		{ID: "delegate_task", Name: "Delegate a task",
			Description: "Have independent workers carry out a task and return the result a majority backs, with the evidence of how it was reached. Data part members: objective or input (or both), policy, receipt, agreement (exact or judged: the panel judges one session's free-text answer); for a numeric answer, answer \"number\" and tolerance {\"absolute\", \"relative\"}.",
			Tags:        []string{"delegation", "consensus"},
			Examples: []string{
				`Delegate the task "What is 17 * 3?"`,
				`Delegate the task "What is 17 * 3?" with policy fast`,
				`{"objective":"multiply","input":"17 * 3","policy":"safe"}`,
			}},
		{ID: "arbitrate", Name: "Arbitrate a dispute",
			Description: "Decide a buyer-seller dispute over a delivered result: SELLER_VALID, SELLER_INVALID or INCONCLUSIVE, with evidence and on request a signed receipt. Data part members: claimed_result and dispute_context (required), input, spec, policy, receipt.",
			Tags:        []string{"arbitration", "dispute", "marketplace"},
			Examples: []string{
				`The seller delivered "17 * 3 = 50" for the task "What is 17 * 3?"; the buyer says "the product is wrong". Who is right?`,
				`{"claimed_result":"17 * 3 = 50","input":"What is 17 * 3?","dispute_context":{"buyer":"the product is wrong"},"policy":"oracle"}`,
			}},
		{ID: "factcheck", Name: "Fact-check a statement",
			Description: "Check whether a statement is true on 3 or 5 independent runs; answers TRUE or FALSE with the consensus block and per-run evidence. Data part members: claim (required), mode (standard, realtime), replicas (3, 5).",
			Tags:        []string{"factcheck", "consensus"},
			Examples: []string{
				"Is it true that 17 * 3 = 51?",
				`Fact-check "17 * 3 = 50" with replicas 5`,
				`{"claim":"17 * 3 = 51","replicas":5}`,
			}},
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
	a2aPath := cfg.A2APath
	if a2aPath == "" {
		a2aPath = DefaultA2APath
	}
	endpoint := baseURL + a2aPath
	c := Card{
		Name:                 cfg.Name,
		Description:          cfg.Description,
		URL:                  endpoint,
		PreferredTransport:   TransportJSONRPC,
		AdditionalInterfaces: []Interface{{URL: endpoint, Transport: TransportJSONRPC}},
		SupportedInterfaces: []AgentInterface{
			{URL: endpoint, ProtocolBinding: TransportJSONRPC, ProtocolVersion: A2AVersion10},
			{URL: endpoint, ProtocolBinding: TransportJSONRPC, ProtocolVersion: A2AVersion03},
		},
		Version:         cfg.Version,
		ProtocolVersion: ProtocolVersion,
		SecuritySchemes: map[string]SecurityScheme{"bearer": {Type: "http", Scheme: "bearer",
			Description: "the integration's API key, as Authorization: Bearer <key>"}},
		Security:             []map[string][]string{{"bearer": {}}},
		SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"bearer": {List: []string{}}}}},
		DefaultInputModes:    []string{"text/plain", "application/json"},
		DefaultOutputModes:   []string{"application/json", "text/plain"},
		Skills:               cfg.Skills,
	}
	if c.Name == "" {
		c.Name = "vouch"
	}
	if c.Description == "" {
		c.Description = "Delegates AI work to independent workers and validates claimed results before anyone acts, pays or settles on them: " +
			"1, 3 or 5 replicas (under the adaptive tier, as few as settle the call, at most 5), their agreement as a status, a confidence, evidence and a signed receipt."
	}
	c.Description += " A2A 0.3 (message/send, tasks/get, tasks/cancel) and 1.0 (SendMessage, GetTask, CancelTask, ListTasks) at " + endpoint +
		" (JSON-RPC); send a skill's example as written, and the completed task's artifact holds the answer as a data part. " +
		"The skills are also MCP tools of the same name at " + baseURL + mcpPath +
		" (Streamable HTTP), with report_outcome, get_receipt and verify_receipt; the trust call is also POST " + baseURL + trust.CallPath + "."
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
// empty. It answers 405 to other methods. A request whose A2A-Version
// (the header, or else the query parameter of that name, which A2A lets
// a client send instead and trusta2a reads as well)
// names a version other than 0.x (1.0, or a later one) gets the card of
// 1.0 alone ([Card.Version1]); one that names none, or 0.3, the card of
// both versions, as the official A2A JavaScript SDK serves them. The card is sent with Vary: A2A-Version,
// Cache-Control max-age=300 and an ETag, a hash of its content; a request
// whose If-None-Match names it is answered 304.
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
		c := New(cfg, base)
		var card any = c
		if wantsVersion1(cmp.Or(r.Header.Get(VersionHeader), r.URL.Query().Get(VersionHeader))) {
			v1, err := c.Version1()
			if err != nil {
				problem.Write(w, problem.New(http.StatusInternalServerError, problem.CodeInternal, "encoding the agent card failed"))
				return
			}
			card = v1
		}
		var body bytes.Buffer
		enc := json.NewEncoder(&body)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(card); err != nil {
			problem.Write(w, problem.New(http.StatusInternalServerError, problem.CodeInternal, "encoding the agent card failed"))
			return
		}
		sum := sha256.Sum256(body.Bytes())
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Add("Vary", VersionHeader)
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", `"`+hex.EncodeToString(sum[:12])+`"`)
		h.Set("Access-Control-Allow-Origin", "*")
		// ServeContent answers If-None-Match naming the ETag 304.
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body.Bytes()))
	})
}
