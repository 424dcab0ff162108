package filestore

import (
	"context"
	"net/url"
	"os"
	"time"
)

// OpenS3ShortLimits opens the S3 store of spec with connection limits
// short enough for a test to watch them end calls that have no deadline
// of their own.
func OpenS3ShortLimits(ctx context.Context, spec string) (Store, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return nil, err
	}
	l := defaultS3Limits()
	l.responseHeader = time.Second
	l.idle = time.Second
	l.pooled = 500 * time.Millisecond
	l.attempts = 2
	l.cleanup = 2 * time.Second
	l.cleanupWait = time.Second
	return openS3With(ctx, u, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), l)
}
