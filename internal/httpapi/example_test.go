package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
)

// A server with one authenticated JSON endpoint, called by a client: the
// client's first call has no key and comes back as a 401 problem.
func ExampleServer() {
	greet := func(_ *http.Request, body []byte) (httpapi.Run, error) {
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(body, &in); err != nil || in.Name == "" {
			return nil, problem.Invalid([]problem.FieldError{{Field: "name", Rule: "required", Message: "is required"}})
		}
		return func(ctx context.Context) (any, error) {
			return map[string]string{"greeting": "hello " + in.Name + " from " + httpapi.Principal(ctx)}, nil
		}, nil
	}
	s, err := httpapi.NewServer(httpapi.Config{
		Name:          "example",
		Authenticator: httpapi.KeyAuthenticator(map[string]string{"k1": "alice"}),
		Endpoints:     []httpapi.Endpoint{{Method: "POST", Path: "/greet", Access: httpapi.Key, Prepare: greet}},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := httpapi.NewClient(httpapi.ClientConfig{Name: "example", BaseURL: srv.URL})
	if err != nil {
		panic(err)
	}

	call := httpapi.Call{Op: "greet", Method: "POST", Path: "/greet", Body: map[string]string{"name": "Bob"}}
	var p *problem.Details
	if err := c.Do(context.Background(), call, nil); errors.As(err, &p) {
		fmt.Println(p.Status, p.Code)
	}
	call.Header = http.Header{"Authorization": {"Bearer k1"}}
	var out struct{ Greeting string }
	if err := c.Do(context.Background(), call, &out); err != nil {
		panic(err)
	}
	fmt.Println(out.Greeting)
	// Output:
	// 401 unauthorized
	// hello Bob from alice
}
