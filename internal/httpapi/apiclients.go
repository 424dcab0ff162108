package httpapi

import (
	"net/http"
	"strconv"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/etag"
)

// clientRoutes registers the API clients' endpoints (admins only).
func (s *Server) clientRoutes() {
	s.data("GET /v1/api-clients", s.listClients)
	s.data("POST /v1/api-clients", s.createClient)
	s.data("GET /v1/api-clients/{id}", s.getClient)
	s.data("DELETE /v1/api-clients/{id}", s.deleteClient)
}

// newClient is a created API client as its create answers it: as GET
// shows it, and its secret, this once.
type newClient struct {
	auth.ClientView
	ClientSecret string `json:"clientSecret"`
}

func (s *Server) createClient(w http.ResponseWriter, r *http.Request) error {
	input, err := decodeBody(r)
	if err != nil {
		return err
	}
	c, err := s.auth.CreateClient(r.Context(), principalOf(r), input)
	if err != nil {
		return err
	}
	out := newClient{ClientView: c.View(), ClientSecret: c.Secret}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", "/v1/api-clients/"+strconv.FormatInt(c.ID, 10))
	// The tag is the client's as reads show it, without the secret.
	w.Header().Set("ETag", etag.OfValue(c.View()))
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listClients(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.auth.Clients(r.Context(), principalOf(r))
	if err != nil {
		return err
	}
	out := make([]auth.ClientView, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.View())
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getClient(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := s.auth.Client(r.Context(), principalOf(r), id)
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, c.View())
	return nil
}

// deleteClient removes a client; an API client never changes, so If-Match
// is checked against the client as it is before the delete.
func (s *Server) deleteClient(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	caller := principalOf(r)
	if im := r.Header.Get("If-Match"); im != "" {
		c, err := s.auth.Client(r.Context(), caller, id)
		if err != nil {
			return err
		}
		if !etag.Match(im, etag.OfValue(c.View())) {
			return errs.New(errs.PreconditionFailed, "precondition_failed", "the API client is not the one If-Match names")
		}
	}
	c, err := s.auth.DeleteClient(r.Context(), caller, id)
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, c.View())
	return nil
}
