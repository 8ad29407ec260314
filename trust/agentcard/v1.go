package agentcard

import (
	"fmt"
	"strings"
)

// VersionHeader is the request header in which an A2A client names the
// protocol version it speaks, as Major.Minor. [Handler] answers a request
// that names a version other than 0.x (1.0, or a later one) with the card
// of 1.0 alone (see [Card.Version1]); a request that names none, or a 0.x
// version, gets the card of 0.3 and 1.0 together.
const VersionHeader = "A2A-Version"

// Card1 is an A2A 1.0 AgentCard: the members that version defines, in its
// shapes, and no member of 0.3, so that a client that refuses members it
// does not know reads it too.
type Card1 struct {
	// Name is the service's name.
	Name string `json:"name"`
	// Description says what the service does and where its skills are served.
	Description string `json:"description"`
	// SupportedInterfaces lists every interface served, the preferred first.
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	// Version is the service's release.
	Version string `json:"version"`
	// DocumentationURL points to the service's documentation, if any.
	DocumentationURL string `json:"documentationUrl,omitempty"`
	// Capabilities are the optional A2A features supported: none.
	Capabilities Capabilities1 `json:"capabilities"`
	// SecuritySchemes name the credentials the service takes.
	SecuritySchemes map[string]SecurityScheme1 `json:"securitySchemes,omitempty"`
	// SecurityRequirements lists the schemes a call must satisfy.
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
	// DefaultInputModes are the media types the skills take.
	DefaultInputModes []string `json:"defaultInputModes"`
	// DefaultOutputModes are the media types the skills answer.
	DefaultOutputModes []string `json:"defaultOutputModes"`
	// Skills are what the service does, one per operation.
	Skills []Skill `json:"skills"`
}

// Capabilities1 are the optional protocol features of A2A 1.0.
type Capabilities1 struct {
	// Streaming is A2A message streaming.
	Streaming bool `json:"streaming"`
	// PushNotifications are A2A task push notifications.
	PushNotifications bool `json:"pushNotifications"`
	// ExtendedAgentCard is an extended card for authenticated clients.
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// SecurityScheme1 is a security scheme in A2A 1.0's shape: one member
// naming its kind. The card's schemes are HTTP authentication.
type SecurityScheme1 struct {
	// HTTPAuth is an HTTP authentication scheme, such as bearer.
	HTTPAuth *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
}

// HTTPAuthSecurityScheme is HTTP authentication (RFC 9110), as A2A 1.0
// names it.
type HTTPAuthSecurityScheme struct {
	// Description tells a person what to send.
	Description string `json:"description,omitempty"`
	// Scheme is the HTTP authentication scheme, such as "bearer".
	Scheme string `json:"scheme"`
}

// Version1 returns the card of A2A 1.0 alone: c without its 0.3 members
// (url, preferredTransport, additionalInterfaces, protocolVersion,
// security, capabilities.stateTransitionHistory), its security schemes
// in 1.0's shape. It fails on a scheme 1.0 cannot state as the card does:
// one whose type is not "http".
func (c Card) Version1() (Card1, error) {
	out := Card1{
		Name:                 c.Name,
		Description:          c.Description,
		SupportedInterfaces:  c.SupportedInterfaces,
		Version:              c.Version,
		DocumentationURL:     c.DocumentationURL,
		Capabilities:         Capabilities1{Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications, ExtendedAgentCard: c.Capabilities.ExtendedAgentCard},
		SecurityRequirements: c.SecurityRequirements,
		DefaultInputModes:    c.DefaultInputModes,
		DefaultOutputModes:   c.DefaultOutputModes,
		Skills:               c.Skills,
	}
	if len(c.SecuritySchemes) > 0 {
		out.SecuritySchemes = make(map[string]SecurityScheme1, len(c.SecuritySchemes))
	}
	for name, s := range c.SecuritySchemes {
		if s.Type != "http" {
			return Card1{}, fmt.Errorf("agentcard: security scheme %q of type %q has no A2A 1.0 form here", name, s.Type)
		}
		out.SecuritySchemes[name] = SecurityScheme1{HTTPAuth: &HTTPAuthSecurityScheme{Description: s.Description, Scheme: s.Scheme}}
	}
	return out, nil
}

// wantsVersion1 reports whether a request's A2A-Version names a version
// other than 0.x; none, or a 0.x version, is a 0.3 client's request, as
// the A2A specification takes a request without the header to be.
func wantsVersion1(version string) bool {
	v := strings.TrimSpace(version)
	return v != "" && !strings.HasPrefix(v, "0.")
}
