// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables, and gives the rest of the service the few
// pieces it shares: the tracer, the thin spans of parts that have no
// instrumentation of their own, and the W3C trace context of a change
// that a webhook delivery carries on.
//
// Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Off, nothing is wrapped or
// instrumented: the service pays nothing for it.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName names the tracer of the service's own spans.
const ScopeName = "planwerk"

// on is whether tracing was set up: the parts ask it once, when they
// are made, to decide whether to instrument themselves.
var on atomic.Bool

// Enabled reports whether Setup turned tracing on in this process.
func Enabled() bool { return on.Load() }

// Propagator is the W3C trace context (and baggage) propagator the
// service reads from requests and writes into webhook deliveries.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Tracer is the tracer of the service's own spans (the global provider's:
// a no-op one while tracing is off).
func Tracer() trace.Tracer { return otel.Tracer(ScopeName) }

// Setup turns tracing on when the environment asks for it: an OTLP
// exporter over HTTP (protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL says
// http/json), a batch processor, the sampler and the resource the
// OTEL_* variables describe, and service.name planwerk unless
// OTEL_SERVICE_NAME names another. The returned shutdown flushes the
// spans not yet sent; it is a no-op when tracing is off. version is the
// service's, for service.version.
func Setup(ctx context.Context, version string) (shutdown func(context.Context) error, err error) {
	nothing := func(context.Context) error { return nil }
	if !wanted() {
		return nothing, nil
	}
	for _, key := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(os.Getenv(key)); p != "" {
			if p != "http/protobuf" && p != "http/json" {
				return nothing, fmt.Errorf("%s=%s: Planwerk exports traces over OTLP/HTTP only (http/protobuf or http/json)", key, p)
			}
			break
		}
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nothing, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	// service.name planwerk first: OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES, detected after it, override it.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("planwerk"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nothing, fmt.Errorf("tracing: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(orphansDropped{sdktrace.NewBatchSpanProcessor(exporter)}),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator)
	on.Store(true)
	return tp.Shutdown, nil
}

// wanted reports whether the environment turns tracing on.
func wanted() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") ||
		strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// orphansDropped exports every span but a client span without a parent:
// a statement, Redis command or file store call that no request or job
// made (the SQLite writer's batch, a pool's connection check) would be a
// trace of one span that explains nothing.
type orphansDropped struct{ sdktrace.SpanProcessor }

func (o orphansDropped) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanKind() == trace.SpanKindClient && !s.Parent().IsValid() {
		return
	}
	o.SpanProcessor.OnEnd(s)
}

// Start starts a span of the service's own (a background job's, or a
// part's without instrumentation of its own).
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return Tracer().Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// End ends span, marking it failed when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Parent is the W3C traceparent of ctx's span, or "" when it has none
// that is sampled: what a change keeps so that its webhook deliveries
// carry the trace on.
func Parent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// WithParent is ctx with the remote span of a traceparent that Parent
// made ("" or a malformed one: ctx as it is).
func WithParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
