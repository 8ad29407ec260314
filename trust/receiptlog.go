package trust

import (
	"net/http"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/receipt"
)

// WithReceiptLog serves the transparency log l of the receipt store beside
// the receipt endpoints of [WithReceiptEndpoints] (it does nothing without
// them), under the same credentials:
//
//   - GET /api/v4/log answers {"origin", "verifier_key", "checkpoint"}:
//     the log's name, its C2SP note verifier key and its latest
//     checkpoint as signed note text;
//   - GET /api/v4/receipt/{receipt_id}/proof answers {"log_index",
//     "tree_size", "inclusion_proof", "checkpoint"} to whoever may fetch
//     the receipt, and the receipt's 404 to anyone else;
//   - GET /api/v4/log/consistency?first=A&second=B answers {"proof"}, or
//     400 naming first or second when it is missing, not a size, or out
//     of range.
//
// A query parameter an endpoint does not define (the others take none)
// is 400 naming it, rule "unknown".
//
// l must read the store given to WithReceiptEndpoints, which must be the
// store the Service's receipts go to (see receipt.NewLog).
func WithReceiptLog(l *receipt.Log) HandlerOption {
	return func(h *Handler) { h.log = l }
}

// logEndpoints are the routes of the log, served by rh; none without a
// log.
func logEndpoints(rh *receipt.Handler) []httpapi.Endpoint {
	if rh.Log == nil {
		return nil
	}
	return []httpapi.Endpoint{
		{Method: http.MethodGet, Path: receipt.LogPath, Access: httpapi.Key, Handler: rh},
		{Method: http.MethodGet, Path: receipt.ConsistencyPath, Access: httpapi.Key, Handler: rh},
		{Method: http.MethodGet, Path: receipt.ReceiptPath + "{receipt_id}" + receipt.ProofSuffix, Access: httpapi.Key, Handler: rh},
	}
}
