package router

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// ijsonProblem returns why data, a worker's output that encoding/json
// wrote, is not I-JSON (RFC 7493), "" when it is: a number beyond the
// range of an IEEE 754 double, a string holding invalid UTF-8 or a lone
// UTF-16 surrogate, or a member name given twice. Such an output is not
// one answer to every reader (JavaScript reads 1e400 as Infinity), nor
// one a receipt can hash (RFC 8785 is defined on I-JSON).
func ijsonProblem(data []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		switch {
		case errors.Is(err, io.EOF):
			return ""
		case err != nil:
			return err.Error()
		case tok.Kind() == '0':
			if _, err := strconv.ParseFloat(tok.String(), 64); err != nil {
				return fmt.Sprintf("number %.40s is beyond the range of an IEEE 754 double", tok.String())
			}
		}
	}
}
