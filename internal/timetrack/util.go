package timetrack

import (
	"encoding/json"
	"strconv"
)

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
