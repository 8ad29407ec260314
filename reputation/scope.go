package reputation

import (
	"fmt"
	"strings"
)

// A Scope names the calls a reliability is learned on: an operation and
// a kind of claim. Evidence learned in a scope also counts for the
// session overall and for the operation, so that a scope with little
// evidence falls back on its session's wider record.
//
// A Store keeps the records of every scope and session a Book was taught
// in for good (only Identify deletes a session's, and only the reports
// on calls older than the report window are swept), so a host that
// names scopes or sessions from its callers' input bounds how many there
// are, as router.Scope does with claim types.
//
// A Book keeps records of its own beside a scope's, under names that
// hold a space (see the package doc) and under the operation "any" for
// the scope of no operation: a Scope whose Operation or Kind holds a
// space, or whose Operation is "any", would share them, and every method
// of a Book that takes a Scope refuses it with an error wrapping
// ErrInvalid.
type Scope struct {
	// Operation is the operation, such as "validate_v3"; "" means none
	// in particular.
	Operation string
	// Kind is the kind of claim; "" means none in particular. It is
	// ignored without an Operation.
	Kind string
}

// check reports a scope whose names are those of the Book's own records:
// see the Scope doc.
func (s Scope) check() error {
	switch {
	case s.Operation == anyOperation:
		return fmt.Errorf("%w: scope of operation %q: it names the records of no operation", ErrInvalid, s.Operation)
	case strings.Contains(s.Operation, " "), strings.Contains(s.Kind, " "):
		return fmt.Errorf("%w: scope %q/%q holds a space, as only the names of a Book's own records do", ErrInvalid, s.Operation, s.Kind)
	}
	return nil
}

// appendKeys appends the keys of session in s to dst, widest first.
func (s Scope) appendKeys(dst []Key, session int64) []Key {
	dst = append(dst, Key{Session: session})
	if s.Operation != "" {
		dst = append(dst, Key{Session: session, Operation: s.Operation})
		if s.Kind != "" {
			dst = append(dst, Key{Session: session, Operation: s.Operation, Kind: s.Kind})
		}
	}
	return dst
}

// levels returns how many keys a session has in s.
func (s Scope) levels() int {
	switch {
	case s.Operation == "":
		return 1
	case s.Kind == "":
		return 2
	}
	return 3
}

// panel returns the key of the panel's record in s.
func (s Scope) panel() Key { return Key{Session: PanelSession, Operation: s.Operation} }

// kind returns s.Kind, or "" without an Operation, which ignores it.
func (s Scope) kind() string {
	if s.Operation == "" {
		return ""
	}
	return s.Kind
}

// anyOperation is the operation of the records under reserved kinds of
// the scope of no operation (a key with a Kind needs an Operation).
const anyOperation = "any"

// reservedOperation is the operation of s's records under reserved
// kinds: s.Operation, or anyOperation.
func (s Scope) reservedOperation() string {
	if s.Operation == "" {
		return anyOperation
	}
	return s.Operation
}
