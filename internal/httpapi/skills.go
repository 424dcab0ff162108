package httpapi

import (
	"encoding/json"
	"net/http"
)

// skillRoutes registers the skill set endpoint of docs/api.md "Skills".
func (s *Server) skillRoutes() {
	s.data("POST /v1/skill-sets/{id}/apply", s.applySkillSet)
}

func (s *Server) applySkillSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	input, err := decodeBody(r)
	if err != nil {
		return err
	}
	docs, err := s.skills.Apply(r.Context(), principalOf(r), id, input)
	if err != nil {
		return err
	}
	out := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		out[i] = json.RawMessage(d)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
