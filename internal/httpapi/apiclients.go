package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"planwerk/internal/auth"
	"planwerk/internal/store"
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
}

func showClient(c store.APIClient) apiClient {
	return apiClient{ID: c.ID, ClientID: c.ClientID, Name: c.Name, User: c.UserID, Scope: c.Scope, CreatedAt: c.CreatedAt}
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
	return s.oneClient(w, r, s.auth.Client)
}

func (s *Server) deleteClient(w http.ResponseWriter, r *http.Request) error {
	return s.oneClient(w, r, s.auth.DeleteClient)
}

// oneClient answers with the client op returns for the path's id.
func (s *Server) oneClient(w http.ResponseWriter, r *http.Request, op func(ctx context.Context, caller auth.Principal, id int64) (store.APIClient, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := op(r.Context(), principalOf(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, showClient(c))
	return nil
}
