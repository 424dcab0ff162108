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

// apiClient is an API client as the API shows it; the secret only once.
type apiClient struct {
	ID           int64  `json:"id"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	Name         string `json:"name"`
	User         int64  `json:"user"`
	Scope        string `json:"scope"`
	CreatedAt    string `json:"createdAt"`
	// CreatedBy is the admin who created the client; null for clients
	// created before it was recorded.
	CreatedBy *int64 `json:"createdBy"`
}

func showClient(c auth.APIClient) apiClient {
	out := apiClient{ID: c.ID, ClientID: c.ClientID, Name: c.Name, User: c.UserID, Scope: c.Scope, CreatedAt: c.CreatedAt}
	if c.CreatedBy != 0 {
		out.CreatedBy = &c.CreatedBy
	}
	return out
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
	out := showClient(c.APIClient)
	out.ClientSecret = c.Secret
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", "/v1/api-clients/"+strconv.FormatInt(c.ID, 10))
	// The tag is the client's as reads show it, without the secret.
	w.Header().Set("ETag", etag.OfValue(showClient(c.APIClient)))
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listClients(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.auth.Clients(r.Context(), principalOf(r))
	if err != nil {
		return err
	}
	out := make([]apiClient, 0, len(cs))
	for _, c := range cs {
		out = append(out, showClient(c))
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
	writeRecordJSON(w, r, http.StatusOK, showClient(c))
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
		if !etag.Match(im, etag.OfValue(showClient(c))) {
			return errs.New(errs.PreconditionFailed, "precondition_failed", "the API client is not the one If-Match names")
		}
	}
	c, err := s.auth.DeleteClient(r.Context(), caller, id)
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, showClient(c))
	return nil
}
