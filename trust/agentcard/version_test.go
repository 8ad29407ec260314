package agentcard_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/agentcard"
)

// TestHandler_version: a request naming A2A 1.0 (or later) in
// A2A-Version gets the card of 1.0 alone, which decodes with no member a
// Card1 lacks and has the security scheme in 1.0's shape; one naming none,
// 0.3 or 0.3.0 gets the card of both versions. Each is sent with Vary:
// A2A-Version and an ETag of its own. The version named in the query
// parameter A2A-Version, with no header, is read the same way.
func TestHandler_version(t *testing.T) {
	srv := httptest.NewServer(agentcard.Handler(agentcard.Config{}))
	defer srv.Close()
	get := func(version string) (*http.Response, []byte) {
		t.Helper()
		resp, body := getCard(t, srv, func(req *http.Request) {
			if v, ok := strings.CutPrefix(version, "?"); ok {
				req.URL.RawQuery = url.Values{agentcard.VersionHeader: {v}}.Encode()
			} else if version != "" {
				req.Header.Set(agentcard.VersionHeader, version)
			}
		})
		if resp.StatusCode != http.StatusOK || !slices.Contains(resp.Header.Values("Vary"), agentcard.VersionHeader) {
			t.Fatalf("A2A-Version %q: %s, Vary %q; want 200 with Vary: A2A-Version", version, resp.Status, resp.Header.Values("Vary"))
		}
		return resp, body
	}

	both, bothBody := get("")
	for _, v := range []string{"0.3", "0.3.0", "?0.3"} {
		resp, body := get(v)
		if !bytes.Equal(body, bothBody) || resp.Header.Get("ETag") != both.Header.Get("ETag") {
			t.Errorf("A2A-Version %s: another card than with no header", v)
		}
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(bothBody, &members); err != nil {
		t.Fatal(err)
	}
	if _, ok := members["url"]; !ok {
		t.Errorf("card with no A2A-Version lacks 0.3's url: %s", bothBody)
	}

	for _, v := range []string{"1.0", "1.1", "?1.0"} {
		resp, body := get(v)
		if resp.Header.Get("ETag") == both.Header.Get("ETag") {
			t.Errorf("A2A-Version %s: the ETag of the card of both versions", v)
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		var card agentcard.Card1
		if err := dec.Decode(&card); err != nil {
			t.Fatalf("A2A-Version %s: the card holds a member A2A 1.0 lacks: %v\n%s", v, err, body)
		}
		want := map[string]agentcard.SecurityScheme1{"bearer": {HTTPAuth: &agentcard.HTTPAuthSecurityScheme{
			Scheme: "bearer", Description: "the integration's API key, as Authorization: Bearer <key>"}}}
		if diff := cmp.Diff(want, card.SecuritySchemes); diff != "" {
			t.Errorf("A2A-Version %s: securitySchemes (-want +got):\n%s", v, diff)
		}
		full := agentcard.New(agentcard.Config{}, srv.URL)
		if diff := cmp.Diff(full.SupportedInterfaces, card.SupportedInterfaces); diff != "" || card.Name != full.Name || len(card.Skills) != len(full.Skills) {
			t.Errorf("A2A-Version %s: name %q, %d skills, supportedInterfaces (-both +1.0):\n%s", v, card.Name, len(card.Skills), diff)
		}
	}
}

// TestCard_Version1_unknownScheme: a security scheme that A2A 1.0's card
// cannot state here is an error, not a card without it.
func TestCard_Version1_unknownScheme(t *testing.T) {
	c := agentcard.New(agentcard.Config{}, "https://vouch.example")
	c.SecuritySchemes["key"] = agentcard.SecurityScheme{Type: "apiKey"}
	if _, err := c.Version1(); err == nil {
		t.Error("Version1 of a card with an apiKey scheme: no error")
	}
}
