package httpapi

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"planwerk/internal/ratelimit"
)

// parsedPolicy is one item of the two fields, as a Structured Field
// parser reads it.
type parsedPolicy struct {
	name   string
	params map[string]int64
}

// parseField parses a field with a Structured Field parser (RFC 8941/9651)
// as a List of String Items with Integer parameters, and fails the test
// on anything else.
func parseField(t *testing.T, what, value string) []parsedPolicy {
	t.Helper()
	list, err := httpsfv.UnmarshalList([]string{value})
	if err != nil {
		t.Fatalf("%s %q is no Structured Field List: %v", what, value, err)
	}
	var out []parsedPolicy
	for _, m := range list {
		item, ok := m.(httpsfv.Item)
		if !ok {
			t.Fatalf("%s %q: an inner list", what, value)
		}
		name, ok := item.Value.(string)
		if !ok {
			t.Fatalf("%s %q: item %v is no String", what, value, item.Value)
		}
		p := parsedPolicy{name: name, params: map[string]int64{}}
		for _, k := range item.Params.Names() {
			v, _ := item.Params.Get(k)
			n, ok := v.(int64)
			if !ok {
				t.Fatalf("%s %q: %s=%v is no Integer", what, value, k, v)
			}
			p.params[k] = n
		}
		out = append(out, p)
	}
	return out
}

// checkFields sets the fields for policies and checks, with a parser,
// that they say what the draft says of each policy.
func checkFields(t *testing.T, policies []ratelimit.Policy) {
	t.Helper()
	h := http.Header{}
	setRateLimit(h, policies...)
	var named []ratelimit.Policy
	for _, p := range policies {
		if p.Name != "" {
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		if len(h) != 0 {
			t.Fatalf("no named policy, fields %v", h)
		}
		return
	}
	pol := parseField(t, "RateLimit-Policy", h.Get("RateLimit-Policy"))
	lim := parseField(t, "RateLimit", h.Get("RateLimit"))
	if len(pol) != len(named) || len(lim) != len(named) {
		t.Fatalf("%d policies, fields %v", len(named), h)
	}
	for i, p := range named {
		want := sfString(p.Name)
		if s, err := httpsfv.Marshal(httpsfv.NewItem(pol[i].name)); err != nil || s != want {
			t.Errorf("policy %q sent as %s, parsed as %q", p.Name, want, pol[i].name)
		}
		if pol[i].name != lim[i].name {
			t.Errorf("policy %d: %q in RateLimit-Policy, %q in RateLimit", i, pol[i].name, lim[i].name)
		}
		q, w := pol[i].params["q"], pol[i].params["w"]
		if q != int64(p.Quota) {
			t.Errorf("%q: q=%d, want %d", p.Name, q, p.Quota)
		}
		if _, ok := pol[i].params["w"]; ok != (p.Window > 0) || (ok && (w < 1 || (w-1)*int64(time.Second) > int64(p.Window) || (w+1)*int64(time.Second) < int64(p.Window))) {
			t.Errorf("%q: w=%d (sent %v) for a window of %s", p.Name, w, ok, p.Window)
		}
		r, tt := lim[i].params["r"], lim[i].params["t"]
		if r != int64(p.Remaining) {
			t.Errorf("%q: r=%d, want %d", p.Name, r, p.Remaining)
		}
		if _, ok := lim[i].params["t"]; ok != (p.Reset > 0) || (ok && retryAfterSeconds(p.Reset) != strconv.FormatInt(tt, 10)) {
			t.Errorf("%q: t=%d (sent %v) for a reset of %s; Retry-After would be %s", p.Name, tt, ok, p.Reset, retryAfterSeconds(p.Reset))
		}
		if len(pol[i].params) > 2 || len(lim[i].params) > 2 {
			t.Errorf("%q: parameters beyond q, w, r, t: %v %v", p.Name, pol[i].params, lim[i].params)
		}
	}
}

// TestRateLimitFields: the fields of the policies the service has, in the
// shapes its limiters report, parse as the draft's Structured Fields.
func TestRateLimitFields(t *testing.T) {
	t.Parallel()
	state := func(q int, w time.Duration, r int, reset time.Duration) ratelimit.State {
		return ratelimit.State{Quota: q, Window: w, Remaining: r, Reset: reset}
	}
	for _, c := range []struct {
		what     string
		policies []ratelimit.Policy
		want     [2]string // RateLimit-Policy, RateLimit
	}{
		{"files", []ratelimit.Policy{{Name: "files", State: state(60, time.Minute, 12, 400*time.Millisecond)}},
			[2]string{`"files";q=60;w=60`, `"files";r=12;t=1`}},
		{"refused", []ratelimit.Policy{{Name: "files", State: state(60, time.Minute, 0, 30*time.Second)}},
			[2]string{`"files";q=60;w=60`, `"files";r=0;t=30`}},
		{"full: no t", []ratelimit.Policy{{Name: "login-pair", State: state(10, 10*time.Minute, 10, 0)}},
			[2]string{`"login-pair";q=10;w=600`, `"login-pair";r=10`}},
		{"brake", []ratelimit.Policy{
			{Name: "login-pair", State: state(10, 10*time.Minute, 9, time.Minute)},
			{Name: "login-address", State: state(50, 500*time.Second, 49, 10*time.Second)},
			{Name: "login-account", State: state(10, 10*time.Minute, 0, 59500*time.Millisecond)}},
			[2]string{`"login-pair";q=10;w=600, "login-address";q=50;w=500, "login-account";q=10;w=600`,
				`"login-pair";r=9;t=60, "login-address";r=49;t=10, "login-account";r=0;t=60`}},
		{"no window", []ratelimit.Policy{{Name: "files", State: state(3, 0, 3, 0)}},
			[2]string{`"files";q=3`, `"files";r=3`}},
		{"an inexact window", []ratelimit.Policy{{Name: "files", State: state(7, 7*(time.Minute/7), 6, time.Minute/7)}},
			[2]string{`"files";q=7;w=60`, `"files";r=6;t=9`}},
		{"a short window", []ratelimit.Policy{{Name: "files", State: state(1, time.Millisecond, 0, time.Millisecond)}},
			[2]string{`"files";q=1;w=1`, `"files";r=0;t=1`}},
		{"a name to escape", []ratelimit.Policy{{Name: `a"b\c` + "\n", State: state(1, time.Second, 1, 0)}},
			[2]string{`"a\"b\\c";q=1;w=1`, `"a\"b\\c";r=1`}},
		{"unnamed left out", []ratelimit.Policy{{}, {Name: "files", State: state(1, time.Second, 0, time.Second)}},
			[2]string{`"files";q=1;w=1`, `"files";r=0;t=1`}},
		{"none", []ratelimit.Policy{{}}, [2]string{}},
	} {
		h := http.Header{}
		setRateLimit(h, c.policies...)
		if got := [2]string{h.Get("RateLimit-Policy"), h.Get("RateLimit")}; got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
		checkFields(t, c.policies)
	}
}

// FuzzRateLimitFields: whatever the state and name, the fields parse as
// Structured Fields and say what the state says.
func FuzzRateLimitFields(f *testing.F) {
	f.Add("files", 60, int64(time.Minute), 12, int64(400*time.Millisecond))
	f.Add("login-pair", 10, int64(10*time.Minute), 0, int64(time.Minute))
	f.Add("x\"\\\x00é", 0, int64(0), 0, int64(0))
	f.Fuzz(func(t *testing.T, name string, q int, w int64, r int, reset int64) {
		if q < 0 || r < 0 || r > q || w < 0 || reset < 0 || w > int64(1000*time.Hour) || reset > w {
			t.Skip() // no limiter reports such a state
		}
		checkFields(t, []ratelimit.Policy{{Name: name, State: ratelimit.State{Quota: q, Window: time.Duration(w),
			Remaining: r, Reset: time.Duration(reset)}}})
	})
}
