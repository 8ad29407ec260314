package trust

import "github.com/vouchkit/vouch/internal/valid"

// validate holds the rules of the envelope. It is built once and only read
// afterwards (it caches struct metadata, as encoding/json does).
var validate = valid.New(nil)
