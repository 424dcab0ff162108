package records

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// AsID reads a whole number of a decoded document (an id, a status).
func AsID(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int64:
		return n, true
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}

// Decode decodes a stored document, keeping numbers exact.
func Decode(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode record: %w", err)
	}
	return m, nil
}
