package receipt

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// nonFinite returns a field error, rule "finite", for the first number of
// v (a struct, walked by its JSON member names) that is NaN or an
// infinity: a value JSON cannot write, which encoding/json would refuse
// without naming it.
func nonFinite(v reflect.Value) []FieldError {
	path, f, found := firstNonFinite(v)
	if !found {
		return nil
	}
	return []FieldError{{Field: strings.TrimPrefix(path, "."), Rule: "finite",
		Message: fmt.Sprintf("must be a finite number, got %v: JSON cannot write it", f)}}
}

// firstNonFinite finds the first NaN or infinity in v and returns its
// path below v (".a[0].b"), built only when one is found.
func firstNonFinite(v reflect.Value) (path string, f float64, found bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f = v.Float()
		return "", f, math.IsNaN(f) || math.IsInf(f, 0)
	case reflect.Pointer:
		if !v.IsNil() {
			return firstNonFinite(v.Elem())
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage
			return "", 0, false
		}
		for i := range v.Len() {
			if p, f, ok := firstNonFinite(v.Index(i)); ok {
				return "[" + strconv.Itoa(i) + "]" + p, f, true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if p, f, ok := firstNonFinite(v.Field(i)); ok {
				sf := t.Field(i)
				name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
				if name == "" {
					name = sf.Name
				}
				return "." + name + p, f, true
			}
		}
	}
	return "", 0, false
}
