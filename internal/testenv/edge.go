package testenv

import (
	"net/http"
)

// Public is a caller of the public endpoints (operations, the reference,
// signed downloads): no tenant, no token.
func (s *Server) Public() *Client { return &Client{Srv: s} }

// With returns a copy of c that sends the header with every request too;
// it overrides what the client sets itself, such as the JSON
// Content-Type of a body.
func (c *Client) With(key, value string) *Client {
	d := *c
	d.Header = c.Header.Clone()
	if d.Header == nil {
		d.Header = http.Header{}
	}
	d.Header.Set(key, value)
	return &d
}
