package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/ratelimit"
)

// setRateLimit puts the RateLimit-Policy and RateLimit fields of the IETF
// draft "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-
// headers) on h: Structured Field lists (RFC 8941) with one item per
// policy, the policy's name a String. A token bucket of Burst events,
// refilled one per Every, is the quota q=Burst over the window
// w=Burst×Every; r is what is left of it, and t the seconds until the
// next event refills (left out when nothing is missing). On a refusal r
// is 0 and t equals Retry-After. See docs/api.md "Rate-limit headers".
// Policies without a name are left out; with none, nothing is set.
func setRateLimit(h http.Header, policies ...ratelimit.Policy) {
	var policy, limit []string
	for _, p := range policies {
		if p.Name == "" {
			continue
		}
		name := sfString(p.Name)
		item := name + ";q=" + strconv.Itoa(p.Quota)
		if p.Window > 0 {
			item += ";w=" + windowSeconds(p.Window)
		}
		policy = append(policy, item)
		item = name + ";r=" + strconv.Itoa(p.Remaining)
		if p.Reset > 0 {
			item += ";t=" + retryAfterSeconds(p.Reset)
		}
		limit = append(limit, item)
	}
	if len(policy) == 0 {
		return
	}
	h.Set("RateLimit-Policy", strings.Join(policy, ", "))
	h.Set("RateLimit", strings.Join(limit, ", "))
}

// sfString writes s as a Structured Field String (RFC 8941 §3.3.3): in
// quotes, with quotes and backslashes escaped. Policy names are the
// service's own constants of printable ASCII; anything else is dropped
// rather than sent as an invalid field.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// windowSeconds is a window in whole seconds, rounded to the nearest and
// at least 1: the draft allows no sub-second window.
func windowSeconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second/2)/time.Second), 1), 10)
}
