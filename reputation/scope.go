package reputation

// A Scope names the calls a reliability is learned on: an operation and
// a kind of claim. Evidence learned in a scope also counts for the
// session overall and for the operation, so that a scope with little
// evidence falls back on its session's wider record.
type Scope struct {
	// Operation is the operation, such as "validate_v3"; "" means none
	// in particular.
	Operation string
	// Kind is the kind of claim; "" means none in particular. It is
	// ignored without an Operation.
	Kind string
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

// reservedOperation is the operation of s's records under reserved
// kinds (a key with a Kind needs an Operation): s.Operation, or "any".
func (s Scope) reservedOperation() string {
	if s.Operation == "" {
		return "any"
	}
	return s.Operation
}
