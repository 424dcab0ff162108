package httpapi

import (
	"net/http"
	"strconv"

	"planwerk/internal/errs"
	"planwerk/internal/etag"
	"planwerk/internal/feed"
	"planwerk/internal/webhooks"
)

// webhookRoutes registers the webhooks' endpoints (admins only).
func (s *Server) webhookRoutes() {
	s.data("GET /v1/webhooks", s.listWebhooks)
	s.data("POST /v1/webhooks", s.createWebhook)
	s.data("GET /v1/webhooks/{id}", s.getWebhook)
	s.data("PATCH /v1/webhooks/{id}", s.updateWebhook)
	s.data("DELETE /v1/webhooks/{id}", s.deleteWebhook)
	s.data("GET /v1/webhooks/{id}/deliveries", s.webhookDeliveries)
}

// newWebhook is a created webhook as its create answers it: as GET shows
// it, and its secret, this once.
type newWebhook struct {
	webhooks.View
	Secret string `json:"secret"`
}

// delivery is an entry of a webhook's deliveries log.
type delivery struct {
	ID             string  `json:"id"`
	Change         string  `json:"change"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"lastStatusCode"`
	NextAttemptAt  *string `json:"nextAttemptAt"`
	CreatedAt      string  `json:"createdAt"`
}

func showDelivery(d webhooks.Delivery) delivery {
	out := delivery{ID: d.ID, Change: feed.Cursor(d.Seq), Status: d.Status, Attempts: d.Attempts, CreatedAt: d.CreatedAt}
	if d.LastStatusCode != 0 {
		out.LastStatusCode = &d.LastStatusCode
	}
	if d.NextAttemptAt != "" {
		out.NextAttemptAt = &d.NextAttemptAt
	}
	return out
}

// ifMatch checks If-Match against the webhook as it is, inside the write.
func ifMatch(r *http.Request) webhooks.Check {
	im := r.Header.Get("If-Match")
	if im == "" {
		return nil
	}
	return func(w webhooks.Webhook) error {
		if !etag.Match(im, etag.OfValue(w.View())) {
			return errs.New(errs.PreconditionFailed, "precondition_failed", "the webhook is not the one If-Match names")
		}
		return nil
	}
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	input, err := decodeBody(r)
	if err != nil {
		return err
	}
	h, err := s.hooks.Create(r.Context(), principalOf(r), input)
	if err != nil {
		return err
	}
	out := newWebhook{View: h.View(), Secret: h.Secret}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", "/v1/webhooks/"+strconv.FormatInt(h.ID, 10))
	// The tag is the webhook's as reads show it, without the secret.
	w.Header().Set("ETag", etag.OfValue(h.View()))
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	hs, err := s.hooks.List(r.Context(), principalOf(r))
	if err != nil {
		return err
	}
	out := make([]webhooks.View, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.View())
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	h, err := s.hooks.Get(r.Context(), principalOf(r), id)
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, h.View())
	return nil
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	input, err := decodeBody(r)
	if err != nil {
		return err
	}
	h, err := s.hooks.Update(r.Context(), principalOf(r), id, input, ifMatch(r))
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, h.View())
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	h, err := s.hooks.Delete(r.Context(), principalOf(r), id, ifMatch(r))
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, h.View())
	return nil
}

func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ds, err := s.hooks.Deliveries(r.Context(), principalOf(r), id)
	if err != nil {
		return err
	}
	out := make([]delivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, showDelivery(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
