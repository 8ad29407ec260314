package receipt

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/problem"
)

// The paths of the log endpoints, served by [Handler] when its Log is set.
const (
	// LogPath is GET /api/v4/log: the log's origin, note verifier key and
	// latest signed checkpoint ([LogResponse]).
	LogPath = "/api/v4/log"
	// ConsistencyPath is GET /api/v4/log/consistency?first=A&second=B:
	// the proof that the tree of size B extends the tree of size A
	// ([ConsistencyResponse]).
	ConsistencyPath = "/api/v4/log/consistency"
	// ProofSuffix ends GET /api/v4/receipt/{receipt_id}/proof: the
	// receipt's inclusion proof ([ProofResponse]).
	ProofSuffix = "/proof"
)

// LogResponse is the answer of GET /api/v4/log.
type LogResponse struct {
	// Origin names the log: the first line of its checkpoints.
	Origin string `json:"origin"`
	// VerifierKey is the C2SP note verifier key of the checkpoints,
	// "origin+hash+base64" (see [LogVerifierKey]).
	VerifierKey string `json:"verifier_key"`
	// Checkpoint is the latest checkpoint, as signed note text.
	Checkpoint string `json:"checkpoint"`
}

// ProofResponse is the answer of GET /api/v4/receipt/{receipt_id}/proof:
// where the receipt is in the log, and the inclusion proof from it to the
// signed checkpoint of a tree of TreeSize leaves. Check it with
// [OpenCheckpoint] and [CheckInclusion] over the receipt's bytes.
type ProofResponse struct {
	LogIndex       int64       `json:"log_index"`
	TreeSize       int64       `json:"tree_size"`
	InclusionProof []tlog.Hash `json:"inclusion_proof"` // base64 hashes
	Checkpoint     string      `json:"checkpoint"`
}

// ConsistencyResponse is the answer of GET /api/v4/log/consistency: the
// RFC 9162 consistency proof as base64 hashes, to check with
// [CheckConsistency] between two checkpoints.
type ConsistencyResponse struct {
	Proof []tlog.Hash `json:"proof"`
}

// serveLog answers GET /api/v4/log.
func (h *Handler) serveLog(w http.ResponseWriter, r *http.Request) {
	if errs := unknownParameters(r); errs != nil {
		write(w, r, problem.Invalid(errs))
		return
	}
	_, signed, err := h.Log.Checkpoint(r.Context())
	if err != nil {
		h.unavailable(w, r, "receipt: checkpoint failed", err)
		return
	}
	writeJSON(w, r, LogResponse{Origin: h.Log.Origin(), VerifierKey: h.Log.VerifierKey(), Checkpoint: string(signed)})
}

// serveProof answers GET /api/v4/receipt/{id}/proof to a caller who may
// see the receipt, with the 404 of GET for anyone else.
func (h *Handler) serveProof(w http.ResponseWriter, r *http.Request, id string) {
	rec, ok := h.fetch(w, r, id)
	if !ok {
		return
	}
	if rec.LogIndex < 0 { // stored before the store kept a log
		write(w, r, notFound())
		return
	}
	proof, cp, signed, err := h.Log.InclusionProof(r.Context(), rec.LogIndex)
	if err != nil {
		h.unavailable(w, r, "receipt: inclusion proof failed", err)
		return
	}
	writeJSON(w, r, ProofResponse{LogIndex: rec.LogIndex, TreeSize: cp.Size, InclusionProof: nonNil(proof), Checkpoint: string(signed)})
}

// serveConsistency answers GET /api/v4/log/consistency?first=A&second=B.
func (h *Handler) serveConsistency(w http.ResponseWriter, r *http.Request) {
	q, _ := url.ParseQuery(r.URL.RawQuery) // unknownParameters names a malformed query
	var errs []FieldError
	size := func(name string) int64 {
		vals, ok := q[name]
		switch {
		case !ok || len(vals) == 0 || vals[0] == "":
			errs = append(errs, FieldError{Field: name, Rule: "required", Message: "is required: a tree size"})
			return 0
		case len(vals) > 1:
			errs = append(errs, FieldError{Field: name, Rule: "unique", Message: "is given more than once"})
			return 0
		}
		// One spelling of each size: "01", "+1" and "-0" are refused,
		// not read as 1 and 0.
		n, err := strconv.ParseInt(vals[0], 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != vals[0] {
			errs = append(errs, FieldError{Field: name, Rule: "type", Message: "must be a tree size: a decimal integer >= 0, without sign or leading zeros"})
			return 0
		}
		return n
	}
	first, second := size("first"), size("second")
	errs = append(errs, unknownParameters(r, "first", "second")...)
	if errs != nil {
		write(w, r, problem.Invalid(errs))
		return
	}
	proof, err := h.Log.ConsistencyProof(r.Context(), first, second)
	var re *RangeError
	if errors.As(err, &re) {
		write(w, r, problem.Invalid([]FieldError{{Field: re.Field, Rule: "range", Message: re.Message}}))
		return
	}
	if err != nil {
		h.unavailable(w, r, "receipt: consistency proof failed", err)
		return
	}
	writeJSON(w, r, ConsistencyResponse{Proof: nonNil(proof)})
}

// unknownParameters returns a field error, rule "unknown", for each
// query parameter of r that is not one of known, in the order of their
// names, and one naming "(query)", rule "malformed", when the query
// holds a pair it cannot read (a ";", a bad escape): a misspelt
// parameter is refused, as an unknown member of a body is, rather than
// read as absent, and so is one r.URL.Query would drop.
func unknownParameters(r *http.Request, known ...string) []FieldError {
	var errs []FieldError
	q, err := url.ParseQuery(r.URL.RawQuery)
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if slices.Contains(known, name) {
			continue
		}
		msg := "is not a parameter of this endpoint, which takes none"
		if len(known) > 0 {
			msg = "is not a parameter of this endpoint, whose parameters are " + strings.Join(known, ", ")
		}
		errs = append(errs, FieldError{Field: name, Rule: "unknown", Message: msg})
	}
	if err != nil {
		errs = append(errs, FieldError{Field: "(query)", Rule: "malformed",
			Message: `is not name=value pairs joined by "&", each escaped as a URL's query is`})
	}
	return errs
}

func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request, msg string, err error) {
	if h.Logger != nil {
		h.Logger.ErrorContext(r.Context(), msg, "err", err)
	}
	write(w, r, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the receipt log is unavailable"))
}

// writeJSON answers 200 with v as JSON.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	body, err := json.Marshal(v)
	if err != nil { // strings, integers and hashes always encode
		write(w, r, problem.New(http.StatusInternalServerError, problem.CodeInternal, "encoding the answer failed"))
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "private, no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(append(body, '\n'))
	}
}
