package webhooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"planwerk/internal/feed"
	"planwerk/internal/jsontext"
	"planwerk/internal/store"
	"planwerk/internal/tracing"
)

// maxAnswer is how much of a receiver's answer is read: only its status
// counts, the rest lets the connection be used again.
const maxAnswer = 4 << 10

// sender makes delivery requests: bounded in time, no redirects followed,
// no proxy from the environment, and (unless private addresses are
// allowed) no connection to an address webhooks may not reach.
type sender struct {
	client  *http.Client
	timeout time.Duration
}

func newSender(cfg Config) *sender {
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		dialer.Control = dialControl
	}
	transport := &http.Transport{
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
	}
	client := &http.Client{Transport: transport, Timeout: cfg.Timeout,
		// A redirect is an answer like any other that is not 2xx: following
		// it could lead the signed request to an address checked by no one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &sender{client: client, timeout: cfg.Timeout}
}

// message is a delivery's body (Standard Webhooks' payload structure).
type message struct {
	Type      string     `json:"type"`
	Timestamp string     `json:"timestamp"`
	Data      feed.Entry `json:"data"`
}

// Body is the JSON body that delivers a change.
func Body(c store.Change) ([]byte, error) {
	return jsontext.Marshal(message{Type: c.Resource + "." + c.Op, Timestamp: c.At, Data: feed.EntryOf(c)})
}

// send posts change c as message id to the webhook and returns the
// answer's status (0 when there was none) and an error unless it is 2xx.
func (s *sender) send(ctx context.Context, w Webhook, id string, c store.Change) (code int, err error) {
	if tracing.Enabled() {
		// A child of the span that made the change: the trace goes on
		// from the request (or job) to its deliveries, and to the
		// receiver, which gets traceparent.
		var span trace.Span
		ctx, span = tracing.Start(tracing.WithParent(ctx, c.TraceParent), http.MethodPost, trace.SpanKindClient,
			semconv.HTTPRequestMethodPost, attribute.Int64("planwerk.webhook.id", w.ID), attribute.Int64("planwerk.change.seq", c.Seq))
		if u, err := url.Parse(w.URL); err == nil {
			// The host alone: a receiver's URL may carry a secret in its
			// path or query.
			span.SetAttributes(semconv.ServerAddress(u.Hostname()))
		}
		defer func() {
			if code != 0 {
				span.SetAttributes(semconv.HTTPResponseStatusCode(code))
			}
			tracing.End(span, err)
		}()
	}
	body, err := Body(c)
	if err != nil {
		return 0, err
	}
	signer, err := standardwebhooks.NewWebhook(w.Secret)
	if err != nil {
		return 0, fmt.Errorf("webhook secret: %w", err)
	}
	now := time.Now()
	sig, err := signer.Sign(id, now, body)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "planwerk-webhooks")
	req.Header.Set(standardwebhooks.HeaderWebhookID, id)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	if tracing.Enabled() {
		tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("answered %d", resp.StatusCode)
	}
	if err != nil {
		return resp.StatusCode, fmt.Errorf("answer broke off: %w", err) // not within the timeout
	}
	return resp.StatusCode, nil
}
