package trusta2a_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vouchcard "github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// The agent card's description names each method the handler serves, in
// the card of either version, and each is served, not method not found.
func TestAgentCard_descriptionNamesTheMethodsServed(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	served := map[string][]string{
		"0.3": {"message/send", "tasks/get", "tasks/cancel"},
		"1.0": {"SendMessage", "GetTask", "CancelTask", "ListTasks"},
	}
	for version, methods := range served {
		for _, m := range methods {
			if _, rerr := f.call1(t, "demo-key", version, m, `{}`); rerr != nil && rerr.Code == -32601 {
				t.Errorf("%s %s: %+v, want it served", version, m, rerr)
			}
		}
	}
	for _, cardVersion := range []string{"", "1.0"} {
		req, err := http.NewRequest(http.MethodGet, f.url+vouchcard.WellKnownPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cardVersion != "" {
			req.Header.Set("A2A-Version", cardVersion)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var card struct{ Description string }
		err = json.NewDecoder(resp.Body).Decode(&card)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		missing := map[string][]string{}
		for version, methods := range served {
			for _, m := range methods {
				if !strings.Contains(card.Description, m) {
					missing[version] = append(missing[version], m)
				}
			}
		}
		if diff := cmp.Diff(map[string][]string{}, missing); diff != "" {
			t.Errorf("card for A2A-Version %q: methods served that its description does not name (-want +got):\n%s\n%s", cardVersion, diff, card.Description)
		}
	}
}
