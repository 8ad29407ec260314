package chatworker

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vouchkit/vouch/router"
)

// panelID is a session id in a panel file: a router.SessionID that YAML
// must write as a whole number.
type panelID router.SessionID

// UnmarshalYAML decodes a whole number; yaml.v3 alone would truncate 1.5
// to 1.
func (id *panelID) UnmarshalYAML(n *yaml.Node) error {
	return decodeWhole(n, (*int64)(id))
}

// UnmarshalJSON decodes as router.SessionID does: a number or a string.
func (id *panelID) UnmarshalJSON(data []byte) error {
	return (*router.SessionID)(id).UnmarshalJSON(data)
}

// wholeInt is an int that YAML must write as a whole number.
type wholeInt int

// UnmarshalYAML decodes a whole number.
func (n *wholeInt) UnmarshalYAML(node *yaml.Node) error {
	return decodeWhole(node, (*int)(n))
}

// decodeWhole decodes node into out, an integer, refusing a number with a
// fractional part.
func decodeWhole(node *yaml.Node, out any) error {
	if node.Kind == yaml.ScalarNode && node.ShortTag() == "!!float" {
		var f float64
		if err := node.Decode(&f); err != nil {
			return err
		}
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return &yaml.TypeError{Errors: []string{
				fmt.Sprintf("line %d: %s is not a whole number", node.Line, node.Value),
			}}
		}
	}
	return node.Decode(out)
}

// decodeError is the error of decoding the panel file name: an empty
// file is said to be one, rather than reported as io.EOF.
func decodeError(name string, err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %s: the file is empty; it must list sessions", ErrInvalidPanel, name)
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalidPanel, name, plainYAML(err))
}

// yamlUnknown matches yaml.v3's error for a member that no field takes,
// which names the Go type it decoded into.
var yamlUnknown = regexp.MustCompile(`^(line \d+): field (.+) not found in type chatworker\.(\w+)$`)

// yamlTypes names each type of a panel file as its author knows it.
var yamlTypes = map[string]struct {
	name string
	typ  reflect.Type
}{
	"panelFile":    {"the file", reflect.TypeFor[panelFile]()},
	"panelSession": {"a session", reflect.TypeFor[panelSession]()},
	"panelWorker":  {"a worker", reflect.TypeFor[panelWorker]()},
	"Price":        {"a price", reflect.TypeFor[Price]()},
}

// plainYAML rewrites, in err, yaml.v3's errors for a misspelt or unknown
// member so that they name what the file's author wrote (a session, a
// worker) and its fields, not the package's Go types.
func plainYAML(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	for i, msg := range te.Errors {
		m := yamlUnknown.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		if t, ok := yamlTypes[m[3]]; ok {
			te.Errors[i] = fmt.Sprintf("%s: %s is not a field of %s; its fields are %s", m[1], m[2], t.name, yamlFields(t.typ))
		}
	}
	return err
}

// yamlFields lists the YAML names of the fields of the struct type t.
func yamlFields(t reflect.Type) string {
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// lastDocument reports whether dec holds no further YAML document, other
// than empty ones (a trailing "---").
func lastDocument(dec *yaml.Decoder) bool {
	for {
		var doc yaml.Node
		switch err := dec.Decode(&doc); {
		case errors.Is(err, io.EOF):
			return true
		case err != nil:
			return false
		}
		if len(doc.Content) > 0 && doc.Content[0].ShortTag() != "!!null" {
			return false
		}
	}
}
