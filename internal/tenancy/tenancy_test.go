package tenancy_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"planwerk/internal/errs"
	"planwerk/internal/tenancy"
)

func TestValidSlug(t *testing.T) {
	t.Parallel()
	cases := []struct {
		slug string
		want bool
	}{
		{"ab", true},
		{"acme", true},
		{"acme-corp", true},
		{"team42", true},
		{"42", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"a", false},
		{"", false},
		{"Acme", false},
		{"ACME", false},
		{"acme_corp", false},
		{"acme.corp", false},
		{"acme corp", false},
		{" acme", false},
		{"acme/", false},
		{"äcme", false},
		{"acme\x00", false},
		{"\u212Acme", false}, // Kelvin sign, upper case of k
	}
	for _, c := range cases {
		if got := tenancy.ValidSlug(c.slug); got != c.want {
			t.Errorf("ValidSlug(%q) = %v, want %v", c.slug, got, c.want)
		}
	}
}

func TestSlugFromValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		value, base string
		want        string // "" means no slug
	}{
		// A bare slug.
		{"acme", "localhost", "acme"},
		{"ACME", "localhost", "acme"},
		{"\u212Acme", "localhost", ""}, // a Kelvin sign must not fold to "k"
		{"https://\u212Acme.localhost", "localhost", ""},
		{"  acme\t", "localhost", "acme"},
		{"acme-corp", "planwerk.example", "acme-corp"},
		// SLUG.BASE-DOMAIN, with port and path.
		{"acme.localhost", "localhost", "acme"},
		{"Acme.LocalHost", "localhost", "acme"},
		{"acme.localhost:8080", "localhost", "acme"},
		{"acme.localhost/some/page?x=1", "localhost", "acme"},
		{"acme.localhost:8080/page#frag", "localhost", "acme"},
		{"acme.planwerk.example", "planwerk.example", "acme"},
		{"acme.planwerk.example", "PLANWERK.example", "acme"},
		// URLs of any scheme.
		{"http://acme.localhost", "localhost", "acme"},
		{"https://acme.localhost:8443/app/page?q=1#top", "localhost", "acme"},
		{"HTTPS://ACME.LOCALHOST/", "localhost", "acme"},
		{"ws://acme.planwerk.example:9000", "planwerk.example", "acme"},
		{"http://acme.localhost.", "localhost", "acme"},
		// Values that name no tenant.
		{"", "localhost", ""},
		{"   ", "localhost", ""},
		{"a", "localhost", ""},
		{"acme_corp", "localhost", ""},
		{"acme.other.test", "localhost", ""},
		{"a.b.localhost", "localhost", ""},
		{"x.localhost", "localhost", ""},
		{".localhost", "localhost", ""},
		{"http://localhost:8080", "localhost", ""},
		{"http://acme", "localhost", ""},
		{"http://acme.localhost.evil.test", "localhost", ""},
		{"http://acme.localhost@evil.test/", "localhost", ""},
		{"http://evil.test/acme.localhost", "localhost", ""},
		{"http://evil.test/?acme.localhost", "localhost", ""},
		{"https://acmelocalhost", "localhost", ""},
		{"acme.planwerk.example", "localhost", ""},
		{"http://[::1]:8080", "localhost", ""},
		{"http://%zz.localhost", "localhost", ""},
		{"null", "localhost", "null"}, // a valid slug: only the origin header treats it specially
	}
	for _, c := range cases {
		got, ok := tenancy.SlugFromValue(c.value, c.base)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("SlugFromValue(%q, %q) = %q, %v; want %q, %v", c.value, c.base, got, ok, c.want, c.want != "")
		}
	}
}

func TestSlugFromHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		host, base string
		want       string
	}{
		{"acme.localhost", "localhost", "acme"},
		{"acme.localhost:8080", "localhost", "acme"},
		{"ACME.LOCALHOST:8080", "localhost", "acme"},
		{"acme.localhost.", "localhost", "acme"},
		{"acme.planwerk.example", "planwerk.example", "acme"},
		{"acme.planwerk.example:443", "Planwerk.Example", "acme"},
		{"team-7.planwerk.example", "planwerk.example", "team-7"},
		{"localhost", "localhost", ""},
		{"localhost:8080", "localhost", ""},
		{"api.example.com", "localhost", ""},
		{"127.0.0.1:8080", "localhost", ""},
		{"[::1]:8080", "localhost", ""},
		{"", "localhost", ""},
		{"a.localhost", "localhost", ""},
		{"a.b.localhost", "localhost", ""},
		{"acme_x.localhost", "localhost", ""},
		{"acmelocalhost", "localhost", ""},
		{"acme.localhost.evil.test", "localhost", ""},
		{"acme.planwerk.example", "example", ""}, // "acme.planwerk" is not a slug
	}
	for _, c := range cases {
		got, ok := tenancy.SlugFromHost(c.host, c.base)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("SlugFromHost(%q, %q) = %q, %v; want %q, %v", c.host, c.base, got, ok, c.want, c.want != "")
		}
	}
}

// header is one request header; several may share a name.
type header struct{ name, value string }

func request(host string, headers ...header) *http.Request {
	r, err := http.NewRequest(http.MethodGet, "http://placeholder/v1/users/me", nil)
	if err != nil {
		panic(err)
	}
	r.Host = host
	for _, h := range headers {
		r.Header.Add(h.name, h.value)
	}
	return r
}

func TestRequestedSlug(t *testing.T) {
	t.Parallel()
	const base = "planwerk.example"
	cases := []struct {
		name    string
		host    string
		headers []header
		want    string
		err     error
	}{
		{"companyurl slug", "api.example.com", []header{{"companyurl", "acme"}}, "acme", nil},
		{"companyurl upper case", "api.example.com", []header{{"companyurl", "ACME"}}, "acme", nil},
		{"origin Null in any case is no header", "api.example.com", []header{{"origin", " Null "}}, "", tenancy.ErrRequired},
		{"empty header is no header", "api.example.com", []header{{"companyurl", "  "}}, "", tenancy.ErrRequired},
		{"companyurl header name in any case", "api.example.com", []header{{"CompanyURL", "acme"}}, "acme", nil},
		{"companyurl bare host", "api.example.com", []header{{"companyurl", "acme.planwerk.example"}}, "acme", nil},
		{"companyurl URL", "api.example.com", []header{{"companyurl", "https://acme.planwerk.example:8443/app?x=1"}}, "acme", nil},
		{"origin", "api.example.com", []header{{"origin", "https://acme.planwerk.example"}}, "acme", nil},
		{"origin with port", "api.example.com", []header{{"origin", "http://acme.planwerk.example:3000"}}, "acme", nil},
		{"referer", "api.example.com", []header{{"referer", "https://acme.planwerk.example/page/1?q=2#x"}}, "acme", nil},
		{"referrer", "api.example.com", []header{{"referrer", "https://acme.planwerk.example/page"}}, "acme", nil},

		// Order: companyurl, then origin, then referrer/referer.
		{"companyurl before origin", "api.example.com",
			[]header{{"origin", "https://beta.planwerk.example"}, {"companyurl", "acme"}}, "acme", nil},
		{"companyurl before referer", "api.example.com",
			[]header{{"referer", "https://beta.planwerk.example/"}, {"companyurl", "acme"}}, "acme", nil},
		{"origin before referer", "api.example.com",
			[]header{{"referer", "https://beta.planwerk.example/"}, {"origin", "https://acme.planwerk.example"}}, "acme", nil},
		{"origin before referrer", "api.example.com",
			[]header{{"referrer", "https://beta.planwerk.example/"}, {"origin", "https://acme.planwerk.example"}}, "acme", nil},
		{"referrer before referer", "api.example.com",
			[]header{{"referer", "https://beta.planwerk.example/"}, {"referrer", "https://acme.planwerk.example/"}}, "acme", nil},
		{"unidentifying companyurl falls through to origin", "api.example.com",
			[]header{{"companyurl", "https://elsewhere.test"}, {"origin", "https://acme.planwerk.example"}}, "acme", nil},

		// origin: null is ignored.
		{"origin null then referer", "api.example.com",
			[]header{{"origin", "null"}, {"referer", "https://acme.planwerk.example/x"}}, "acme", nil},
		{"origin null alone", "api.example.com", []header{{"origin", "null"}}, "", tenancy.ErrRequired},

		// Tenant host.
		{"tenant host, same tenant", "acme.planwerk.example", []header{{"companyurl", "acme"}}, "acme", nil},
		{"tenant host with port, same tenant", "ACME.planwerk.example:8443", []header{{"origin", "https://acme.planwerk.example"}}, "acme", nil},
		{"tenant host, other tenant", "acme.planwerk.example", []header{{"companyurl", "beta"}}, "", tenancy.ErrMismatch},
		{"tenant host, other tenant in origin", "acme.planwerk.example:8080", []header{{"origin", "https://beta.planwerk.example"}}, "", tenancy.ErrMismatch},
		{"tenant host, no header", "acme.planwerk.example", nil, "", tenancy.ErrRequired},

		// Neutral hosts.
		{"neutral host, no header", "api.example.com", nil, "", tenancy.ErrRequired},
		{"base domain host", "planwerk.example", []header{{"companyurl", "acme"}}, "acme", nil},
		{"localhost host", "localhost:8080", []header{{"companyurl", "acme"}}, "acme", nil},
		{"IP host", "127.0.0.1:8080", []header{{"companyurl", "acme"}}, "acme", nil},

		// Headers that identify no tenant.
		{"companyurl not a tenant", "api.example.com", []header{{"companyurl", "https://elsewhere.test"}}, "", tenancy.ErrUnknown},
		{"origin of the neutral host", "api.example.com", []header{{"origin", "https://planwerk.example"}}, "", tenancy.ErrUnknown},
		{"referer of another site", "api.example.com", []header{{"referer", "https://evil.test/acme.planwerk.example"}}, "", tenancy.ErrUnknown},
		{"one-letter slug", "api.example.com", []header{{"companyurl", "a"}}, "", tenancy.ErrUnknown},
		{"userinfo trick", "api.example.com", []header{{"origin", "https://acme.planwerk.example@evil.test"}}, "", tenancy.ErrUnknown},
		{"only unrelated headers", "api.example.com", []header{{"x-tenant", "acme"}, {"host", "acme.planwerk.example"}}, "", tenancy.ErrRequired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := tenancy.RequestedSlug(request(c.host, c.headers...), base)
			if got != c.want || !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Errorf("RequestedSlug = %q, %v; want %q, %v", got, err, c.want, c.err)
			}
		})
	}
}

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	for err, code := range map[*errs.Error]string{
		tenancy.ErrRequired: "tenant_required",
		tenancy.ErrUnknown:  "unknown_tenant",
		tenancy.ErrMismatch: "tenant_mismatch",
	} {
		if err.Code != code || err.Error() == "" {
			t.Errorf("error %q has code %q, want %q", err.Error(), err.Code, code)
		}
	}
}

func FuzzSlugFromValue(f *testing.F) {
	for _, seed := range []struct{ value, base string }{
		{"acme", "localhost"},
		{"ACME", "localhost"},
		{"acme.localhost:8080/x", "localhost"},
		{"https://acme.planwerk.example:8443/p?q#f", "planwerk.example"},
		{"http://acme.localhost@evil.test", "localhost"},
		{"http://[::1]:80", "localhost"},
		{"http://%zz", "localhost"},
		{"://", ""},
		{"a.b.localhost", "localhost"},
		{"\u212Acme", "localhost"},
		{"acme.LOCALHOST.", "LocalHost"},
		{"", ""},
		{strings.Repeat("a", 70) + ".localhost", "localhost"},
	} {
		f.Add(seed.value, seed.base)
	}
	f.Fuzz(func(t *testing.T, value, base string) {
		slug, ok := tenancy.SlugFromValue(value, base)
		if ok != (slug != "") {
			t.Fatalf("SlugFromValue(%q, %q) = %q, %v", value, base, slug, ok)
		}
		if ok && !tenancy.ValidSlug(slug) {
			t.Fatalf("SlugFromValue(%q, %q) returned invalid slug %q", value, base, slug)
		}
		hslug, hok := tenancy.SlugFromHost(value, base)
		if hok != (hslug != "") || hok && !tenancy.ValidSlug(hslug) {
			t.Fatalf("SlugFromHost(%q, %q) = %q, %v", value, base, hslug, hok)
		}
	})
}

func FuzzRequestedSlug(f *testing.F) {
	type seed struct{ companyurl, origin, referrer, referer, host, base string }
	for _, s := range []seed{
		{"acme", "", "", "", "api.example.com", "planwerk.example"},
		{"", "https://acme.planwerk.example", "", "", "acme.planwerk.example", "planwerk.example"},
		{"", "null", "", "https://acme.localhost/x", "localhost:8080", "localhost"},
		{"beta", "", "", "", "acme.localhost:8080", "localhost"},
		{"", "", "", "", "acme.localhost", "localhost"},
		{"https://elsewhere.test", "", "", "", "", "localhost"},
		{"", "", "https://acme.localhost/", "https://beta.localhost/", "", "localhost"},
		{"ACME.LOCALHOST:1", "", "", "", "ACME.localhost.", "localhost"},
		{"\u212Acme", "", "", "", "", "localhost"},
		{"http://%41", "null", "", "", "[::1]:80", ""},
	} {
		f.Add(s.companyurl, s.origin, s.referrer, s.referer, s.host, s.base)
	}
	f.Fuzz(func(t *testing.T, companyurl, origin, referrer, referer, host, base string) {
		var hs []header
		for _, h := range []header{{"companyurl", companyurl}, {"origin", origin}, {"referrer", referrer}, {"referer", referer}} {
			if h.value != "" {
				hs = append(hs, h)
			}
		}
		r := request(host, hs...)
		slug, err := tenancy.RequestedSlug(r, base)
		if err != nil {
			if slug != "" {
				t.Fatalf("slug %q returned with error %v", slug, err)
			}
			if !errors.Is(err, tenancy.ErrRequired) && !errors.Is(err, tenancy.ErrUnknown) && !errors.Is(err, tenancy.ErrMismatch) {
				t.Fatalf("unexpected error %v", err)
			}
			if len(hs) == 0 && !errors.Is(err, tenancy.ErrRequired) {
				t.Fatalf("no headers: err = %v, want ErrRequired", err)
			}
			return
		}
		if !tenancy.ValidSlug(slug) {
			t.Fatalf("RequestedSlug returned invalid slug %q", slug)
		}
		if hostSlug, ok := tenancy.SlugFromHost(host, base); ok && hostSlug != slug {
			t.Fatalf("host %q names %q but RequestedSlug returned %q", host, hostSlug, slug)
		}
		// The slug comes from one of the headers.
		named := false
		for _, h := range hs {
			if s, ok := tenancy.SlugFromValue(h.value, base); ok && s == slug {
				named = true
			}
		}
		if !named {
			t.Fatalf("slug %q is named by none of the headers %q", slug, hs)
		}
	})
}
