package testenv

import (
	"net/http"
	"slices"
	"testing"
)

// Invalid makes a request that must answer 400 "invalid" with problems
// naming exactly fields (in any order), each with a message.
func (c *Client) Invalid(t testing.TB, method, path string, body any, fields ...string) M {
	t.Helper()
	m := c.Fail(t, method, path, body, http.StatusBadRequest, "invalid", fields...)
	got, want := ProblemFields(m), slices.Clone(fields)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s %s: problems name %v, want exactly %v (body %v)", method, path, got, want, m)
	}
	return m
}

// Anonymous is a caller of c's tenant without a token.
func (c *Client) Anonymous() *Client {
	return &Client{Srv: c.Srv, Slug: c.Slug}
}
