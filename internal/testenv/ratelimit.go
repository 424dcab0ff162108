package testenv

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/dunglas/httpsfv"
)

// RateLimit is one policy of an answer's RateLimit fields: from
// RateLimit-Policy its quota q and window w, from RateLimit what is left
// (r) and the seconds until more is (t). Window and Reset are -1 when the
// field leaves them out.
type RateLimit struct {
	Quota, Window, Remaining, Reset int64
}

// RateLimits parses an answer's RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers) with a Structured Field parser
// (RFC 8941/9651) and checks them strictly: each a List of Items whose
// value is a String naming a policy, once; q and r non-negative Integers,
// w a positive and t a non-negative one; no other parameters; the two
// fields naming the same policies. It returns the policies by name (none
// when the answer has neither field) and fails the test otherwise.
func RateLimits(t testing.TB, what string, hdr http.Header) map[string]RateLimit {
	t.Helper()
	out := map[string]RateLimit{}
	policy, limit := hdr.Values("RateLimit-Policy"), hdr.Values("RateLimit")
	if len(policy) == 0 && len(limit) == 0 {
		return out
	}
	pl, err := parseRateLimitList(policy, map[string]int64{"q": 0, "w": 1}, "q")
	if err != nil {
		t.Fatalf("%s: RateLimit-Policy %q: %v", what, policy, err)
	}
	ll, err := parseRateLimitList(limit, map[string]int64{"r": 0, "t": 0}, "r")
	if err != nil {
		t.Fatalf("%s: RateLimit %q: %v", what, limit, err)
	}
	if len(pl) != len(ll) {
		t.Fatalf("%s: RateLimit-Policy %q and RateLimit %q name different policies", what, policy, limit)
	}
	for name, p := range pl {
		l, ok := ll[name]
		if !ok {
			t.Fatalf("%s: RateLimit %q lacks policy %q of RateLimit-Policy %q", what, limit, name, policy)
		}
		out[name] = RateLimit{Quota: p["q"], Window: orNone(p, "w"), Remaining: l["r"], Reset: orNone(l, "t")}
	}
	return out
}

func orNone(params map[string]int64, name string) int64 {
	if v, ok := params[name]; ok {
		return v
	}
	return -1
}

// parseRateLimitList parses one of the two fields: a List of String
// Items with Integer parameters of the given names, each at least its
// minimum, the required one present.
func parseRateLimitList(values []string, allowed map[string]int64, required string) (map[string]map[string]int64, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("missing")
	}
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("an empty list")
	}
	out := map[string]map[string]int64{}
	for _, m := range list {
		item, ok := m.(httpsfv.Item)
		if !ok {
			return nil, fmt.Errorf("an inner list instead of an item")
		}
		name, ok := item.Value.(string)
		if !ok {
			return nil, fmt.Errorf("item %v is no String", item.Value)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("policy %q twice", name)
		}
		params := map[string]int64{}
		for _, k := range item.Params.Names() {
			min, ok := allowed[k]
			if !ok {
				return nil, fmt.Errorf("policy %q: unexpected parameter %q", name, k)
			}
			v, _ := item.Params.Get(k)
			n, ok := v.(int64)
			if !ok || n < min {
				return nil, fmt.Errorf("policy %q: %s=%v is no Integer of at least %d", name, k, v, min)
			}
			params[k] = n
		}
		if _, ok := params[required]; !ok {
			return nil, fmt.Errorf("policy %q without %s", name, required)
		}
		out[name] = params
	}
	return out, nil
}
