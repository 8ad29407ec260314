package chatworker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-playground/validator/v10"
	"gopkg.in/yaml.v3"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// PanelSession is one session of a panel: its id, pool and tiers, and the
// worker that runs its jobs.
type PanelSession struct {
	// ID is the session's id, positive and unique in the panel.
	ID router.SessionID
	// Pool names the worker pool the session belongs to; sessions of
	// different providers or models sit in different pools. Empty is
	// allowed.
	Pool string
	// Tiers are the tiers the session serves; empty means every tier.
	Tiers []router.Tier
	// Worker runs the session's jobs.
	Worker *Worker
}

// PanelError reports one problem of a panel file: the file, the field by
// its path in the file ("sessions[2].worker.model"), and what is wrong. It
// unwraps to ErrInvalidPanel or ErrMissingEnv.
type PanelError struct {
	// File is the file's name as given.
	File string
	// Field is the path of the field in the file.
	Field string
	// Message says what is wrong.
	Message string
	// Err is ErrInvalidPanel or ErrMissingEnv.
	Err error
}

// Error returns "chatworker: <file>: <field>: <message>".
func (e *PanelError) Error() string {
	return "chatworker: " + e.File + ": " + e.Field + ": " + e.Message
}

// Unwrap returns Err.
func (e *PanelError) Unwrap() error { return e.Err }

// panelFile is the file's form. Field names are the same in JSON and YAML.
type panelFile struct {
	// Prices is a price table every worker starts from; a worker's own
	// prices override its entries.
	Prices   map[string]Price `json:"prices" yaml:"prices" validate:"omitempty,dive"`
	Sessions []panelSession   `json:"sessions" yaml:"sessions" validate:"required,min=1,dive"`
}

type panelSession struct {
	ID     panelID       `json:"id" yaml:"id" validate:"gt=0"`
	Pool   string        `json:"pool" yaml:"pool"`
	Tiers  []router.Tier `json:"tiers" yaml:"tiers" validate:"omitempty,unique,dive,oneof=fast safe oracle balanced"`
	Worker panelWorker   `json:"worker" yaml:"worker"`
}

type panelWorker struct {
	BaseURL     string            `json:"base_url" yaml:"base_url" validate:"required,http_url"`
	Model       string            `json:"model" yaml:"model" validate:"required"`
	APIKeyEnv   string            `json:"api_key_env" yaml:"api_key_env" validate:"omitempty,env_name"`
	Temperature *float64          `json:"temperature" yaml:"temperature" validate:"omitempty,gte=0,lte=2"`
	MaxTokens   wholeInt          `json:"max_tokens" yaml:"max_tokens" validate:"gte=0"`
	Headers     map[string]string `json:"headers" yaml:"headers"`
	HeaderEnv   map[string]string `json:"header_env" yaml:"header_env" validate:"omitempty,dive,env_name"`
	Prices      map[string]Price  `json:"prices" yaml:"prices" validate:"omitempty,dive"`
}

// panelRules validates panel files; like encoding/json's cache, it is
// immutable once built. A base_url refused is shown without its password
// and query, which may hold a key; an api_key_env refused is not shown,
// as it may be the key itself.
var panelRules = valid.New(map[string]valid.Rule{
	"http_url": {Message: func(_ string, v any) string {
		return fmt.Sprintf("must be an absolute URL, got %q", httpapi.ShownURL(fmt.Sprint(v)))
	}},
	"env_name": {
		Check: func(fl validator.FieldLevel) bool { return isEnvName(fl.Field().String()) },
		Message: func(string, any) string {
			return "must be the name of an environment variable (letters, digits and underscores, not starting with a digit), not the key itself"
		},
	},
})

// isEnvName reports whether s is a portable environment variable name.
func isEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// LoadPanel reads a panel file and returns its sessions, each with a
// constructed worker. The file's extension picks the format: .json for
// JSON, .yaml or .yml for YAML. getenv (os.Getenv in most programs) reads
// the environment variables that api_key_env names.
//
// A panel file lists sessions, each with its worker:
//
//	prices:                       # optional, per model, per 1,000 tokens
//	  gpt-4o-mini: {prompt_per_1k: 0.00015, completion_per_1k: 0.0006}
//	sessions:
//	  - id: 201                   # positive, unique
//	    pool: openai              # optional
//	    tiers: [fast, safe]       # optional: fast, safe, oracle, balanced
//	    worker:
//	      base_url: https://api.openai.com/v1   # required
//	      model: gpt-4o-mini                     # required
//	      api_key_env: OPENAI_API_KEY            # optional: no key if absent
//	      temperature: 0                         # optional, 0 to 2
//	      max_tokens: 512                        # optional
//	      headers: {X-Team: risk}                # optional
//	      header_env: {X-Gateway-Key: GW_KEY}    # optional: values from the environment
//	      prices: {}                             # optional, over the shared ones
//
// Unknown fields are errors, so a misspelt one is not silently ignored;
// so are an empty file, a second YAML document, a fractional id or
// max_tokens, and a header named twice in headers and header_env
// together, in any mix of case (X-Team and x-team). Each problem found is a [*PanelError] naming the field; all
// are returned together, joined. api_key_env is the name of a variable,
// never the key: a value that is no variable's name is refused without
// being quoted. A session whose api_key_env names a variable that is
// unset or empty fails with ErrMissingEnv.
func LoadPanel(path string, getenv func(string) string) ([]PanelSession, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chatworker: reading the panel file: %w", err)
	}
	return ParsePanel(path, data, getenv)
}

// ParsePanel is [LoadPanel] for a file already read: name is the file's
// name, whose extension picks the format and which errors name.
func ParsePanel(name string, data []byte, getenv func(string) string) ([]PanelSession, error) {
	var f panelFile
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".json":
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, decodeError(name, io.EOF)
		}
		// UnmarshalKnown names by its path each member that is unknown,
		// of the wrong type or given twice (encoding/json would keep the
		// last value in silence; YAML refuses it already).
		if err := jsonbody.UnmarshalKnown(data, &f); err != nil {
			var p *problem.Details
			if !errors.As(err, &p) {
				return nil, decodeError(name, err)
			}
			if len(p.Errors) == 0 { // malformed JSON, at a byte offset
				return nil, fmt.Errorf("%w: %s: %s", ErrInvalidPanel, name, p.Detail)
			}
			errs := make([]error, len(p.Errors))
			for i, fe := range p.Errors {
				if fe.Field == "(body)" {
					fe.Field = "(the file)"
				}
				errs[i] = &PanelError{File: name, Field: fe.Field, Message: fe.Message, Err: ErrInvalidPanel}
			}
			return nil, errors.Join(errs...)
		}
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			return nil, decodeError(name, err)
		}
		if !lastDocument(dec) {
			return nil, fmt.Errorf("%w: %s: a second YAML document follows the first; a panel file holds one", ErrInvalidPanel, name)
		}
	default:
		return nil, fmt.Errorf("%w: %s: the extension %q is neither .json, .yaml nor .yml", ErrInvalidPanel, name, ext)
	}

	var errs []error
	fail := func(field, msg string, sentinel error) {
		errs = append(errs, &PanelError{File: name, Field: field, Message: msg, Err: sentinel})
	}
	for _, fe := range panelRules.Struct(&f) {
		fail(fe.Field, fe.Message, ErrInvalidPanel)
	}
	first := make(map[panelID]int, len(f.Sessions))
	for i, s := range f.Sessions {
		if j, dup := first[s.ID]; dup && s.ID > 0 {
			fail(fmt.Sprintf("sessions[%d].id", i), fmt.Sprintf("%d repeats sessions[%d].id", s.ID, j), ErrInvalidPanel)
		} else if !dup {
			first[s.ID] = i
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	out := make([]PanelSession, 0, len(f.Sessions))
	for i, s := range f.Sessions {
		path := fmt.Sprintf("sessions[%d].worker", i)
		cfg := Config{
			BaseURL:     s.Worker.BaseURL,
			Model:       s.Worker.Model,
			Temperature: s.Worker.Temperature,
			MaxTokens:   int(s.Worker.MaxTokens),
		}
		if env := s.Worker.APIKeyEnv; env != "" {
			if cfg.APIKey = getenv(env); cfg.APIKey == "" {
				fail(path+".api_key_env", fmt.Sprintf("session %d: environment variable %s is unset or empty", s.ID, env), ErrMissingEnv)
				continue
			}
		}
		if len(s.Worker.Headers)+len(s.Worker.HeaderEnv) > 0 {
			cfg.Headers = make(http.Header, len(s.Worker.Headers)+len(s.Worker.HeaderEnv))
			for k, v := range s.Worker.Headers {
				cfg.Headers[k] = []string{v}
			}
			if !panelHeaderEnv(s.ID, path, s.Worker.HeaderEnv, cfg.Headers, getenv, fail) {
				continue
			}
		}
		if len(f.Prices)+len(s.Worker.Prices) > 0 {
			cfg.Prices = make(map[string]Price, len(f.Prices)+len(s.Worker.Prices))
			for k, v := range f.Prices {
				cfg.Prices[k] = v
			}
			for k, v := range s.Worker.Prices {
				cfg.Prices[k] = v
			}
		}
		w, err := New(cfg)
		if err != nil {
			field, msg := path, err.Error()
			var ce *configError
			if errors.As(err, &ce) {
				field, msg = panelField(path, s.Worker, ce)
			}
			fail(field, fmt.Sprintf("session %d: %s", s.ID, msg), ErrInvalidPanel)
			continue
		}
		tiers := s.Tiers
		if len(tiers) == 0 {
			tiers = nil
		}
		out = append(out, PanelSession{ID: router.SessionID(s.ID), Pool: s.Pool, Tiers: tiers, Worker: w})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// panelField returns the path in the file of the field that ce, an error
// of New for the worker at path, is about, and what is wrong with it: New
// names Config's fields, which the file spells otherwise, and a header's
// value or the key from header_env or api_key_env is named by its
// variable, never shown.
func panelField(path string, w panelWorker, ce *configError) (field, msg string) {
	switch ce.field {
	case "BaseURL":
		return path + ".base_url", ce.reason
	case "APIKey":
		return path + ".api_key_env", fmt.Sprintf("environment variable %s %s", w.APIKeyEnv, ce.reason)
	case "Headers":
		if env, ok := w.HeaderEnv[ce.key]; ok {
			if ce.inValue {
				return jsonbody.MemberPath(path+".header_env", ce.key), fmt.Sprintf("environment variable %s %s", env, ce.reason)
			}
			return jsonbody.MemberPath(path+".header_env", ce.key), ce.reason
		}
		return jsonbody.MemberPath(path+".headers", ce.key), ce.reason
	}
	return path, ce.msg
}

// panelHeaderEnv adds to h the headers of header_env, each the value of
// the environment variable it names, as api_key_env's key: a secret
// header (a gateway's key) stays out of the file. A variable unset or
// empty, or a header headers gives too, is a failure of the field, at
// path; it reports whether every header was added.
func panelHeaderEnv(id panelID, path string, headerEnv map[string]string, h http.Header, getenv func(string) string, fail func(field, msg string, sentinel error)) bool {
	given := make(map[string]bool, len(h))
	for name := range h {
		given[http.CanonicalHeaderKey(name)] = true
	}
	ok := true
	for _, name := range slices.Sorted(maps.Keys(headerEnv)) {
		field := jsonbody.MemberPath(path+".header_env", name)
		env := headerEnv[name]
		switch v := getenv(env); {
		case given[http.CanonicalHeaderKey(name)]:
			fail(field, fmt.Sprintf("session %d: headers gives %s too; give it once", id, name), ErrInvalidPanel)
			ok = false
		case v == "":
			fail(field, fmt.Sprintf("session %d: environment variable %s is unset or empty", id, env), ErrMissingEnv)
			ok = false
		default:
			h[name] = []string{v}
		}
	}
	return ok
}
