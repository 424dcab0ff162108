package filestore

import (
	"context"
	"io"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"planwerk/internal/tracing"
)

// traced is a Store whose calls are client spans: S3's named as the
// AWS API names them, with the bucket and key (the semantic conventions
// of AWS S3), a folder's as "folder" and the operation. A file's bytes
// move after Open returns: its span covers finding the file.
type traced struct {
	Store
	system string // "S3" or "folder"
	attrs  []attribute.KeyValue
}

// withTracing wraps s in spans when tracing is on. bucket is S3's ("":
// a folder).
func withTracing(s Store, bucket string) Store {
	if !tracing.Enabled() {
		return s
	}
	t := &traced{Store: s, system: "folder"}
	if bucket != "" {
		t.system = "S3"
		t.attrs = []attribute.KeyValue{attribute.String("rpc.system", "aws-api"), attribute.String("rpc.service", "S3"),
			attribute.String("aws.s3.bucket", bucket)}
	}
	if sr, ok := s.(SpaceReporter); ok {
		return tracedWithSpace{t, sr}
	}
	return t
}

// tracedWithSpace keeps a folder's SpaceReporter.
type tracedWithSpace struct {
	*traced
	SpaceReporter
}

func (t *traced) start(ctx context.Context, op, s3op, key string) (context.Context, trace.Span) {
	name, attrs := t.system+" "+op, t.attrs
	if t.system == "S3" {
		name = "S3." + s3op
		attrs = append(attrs[:len(attrs):len(attrs)], attribute.String("rpc.method", s3op))
		if key != "" {
			attrs = append(attrs, attribute.String("aws.s3.key", key))
		}
	}
	return tracing.Start(ctx, name, trace.SpanKindClient, attrs...)
}

func (t *traced) Put(ctx context.Context, key string, r io.Reader) (n int64, err error) {
	ctx, span := t.start(ctx, "put", "PutObject", key)
	defer func() { tracing.End(span, err) }()
	return t.Store.Put(ctx, key, r)
}

func (t *traced) Open(ctx context.Context, key string) (rc io.ReadSeekCloser, n int64, err error) {
	ctx, span := t.start(ctx, "open", "GetObject", key)
	defer func() { tracing.End(span, err) }()
	return t.Store.Open(ctx, key)
}

func (t *traced) Delete(ctx context.Context, key string) (err error) {
	ctx, span := t.start(ctx, "delete", "DeleteObject", key)
	defer func() { tracing.End(span, err) }()
	return t.Store.Delete(ctx, key)
}

func (t *traced) Presign(ctx context.Context, key, filename, contentType string, ttl time.Duration) (u string, err error) {
	ctx, span := t.start(ctx, "presign", "PresignGetObject", key)
	defer func() { tracing.End(span, err) }()
	return t.Store.Presign(ctx, key, filename, contentType, ttl)
}

func (t *traced) Ping(ctx context.Context) (err error) {
	ctx, span := t.start(ctx, "ping", "HeadBucket", "")
	defer func() { tracing.End(span, err) }()
	return t.Store.Ping(ctx)
}

func (t *traced) Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) (err error) {
	ctx, span := t.start(ctx, "walk", "ListObjectsV2", "")
	defer func() { tracing.End(span, err) }()
	return t.Store.Walk(ctx, prefix, fn)
}

func (t *traced) WalkIncomplete(ctx context.Context, prefix string, fn func(Incomplete) error) (err error) {
	ctx, span := t.start(ctx, "walk incomplete", "ListMultipartUploads", "")
	defer func() { tracing.End(span, err) }()
	return t.Store.WalkIncomplete(ctx, prefix, fn)
}

func (t *traced) AbortIncomplete(ctx context.Context, u Incomplete) (err error) {
	ctx, span := t.start(ctx, "abort incomplete", "AbortMultipartUpload", u.Key)
	defer func() { tracing.End(span, err) }()
	return t.Store.AbortIncomplete(ctx, u)
}
