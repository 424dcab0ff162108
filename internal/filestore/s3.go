package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 keeps files in an S3-compatible bucket. Objects appear only when an
// upload completes; downloads use the store's own presigned URLs.
type S3 struct {
	client *minio.Client
	bucket string
}

// partSize bounds the memory of one streaming upload: minio-go buffers a
// part at a time when the size is not known in advance.
const partSize = 8 << 20

func openS3(ctx context.Context, u *url.URL, accessKey, secretKey string) (*S3, error) {
	bucket := u.Host
	q := u.Query()
	endpoint := q.Get("endpoint")
	if bucket == "" || endpoint == "" {
		return nil, errors.New("file store: s3://BUCKET?endpoint=HOST:PORT needs a bucket and an endpoint")
	}
	secure := q.Get("secure") != "false"
	client, err := minio.New(endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(accessKey, secretKey, ""),
		Secure:       secure,
		Region:       q.Get("region"),
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	s := &S3{client: client, bucket: bucket}
	exists, err := client.BucketExists(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("file store: bucket %s: %w", bucket, err)
	}
	if !exists {
		// Another instance starting at the same time may create it first.
		err := client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: q.Get("region")})
		if code := minio.ToErrorResponse(err).Code; err != nil && code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return nil, fmt.Errorf("file store: create bucket %s: %w", bucket, err)
		}
	}
	return s, nil
}

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	cr := &countingReader{r: r}
	_, err := s.client.PutObject(ctx, s.bucket, key, cr, -1, minio.PutObjectOptions{
		PartSize:    partSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		if cr.err != nil {
			return cr.n, cr.err // the reader's own error (size cap) is the cause
		}
		return cr.n, fmt.Errorf("file store: put %s: %w", key, err)
	}
	return cr.n, nil
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// Open implements Store.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("file store: %w", err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, 0, ErrNotFound
		}
		return nil, 0, fmt.Errorf("file store: %w", err)
	}
	return obj, st.Size, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return fmt.Errorf("file store: delete %s: %w", key, err)
	}
	return nil
}

// Presign implements Store: the bucket's own presigned GET URL, answering
// with the upload's content type and filename.
func (s *S3) Presign(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error) {
	params := url.Values{}
	params.Set("response-content-disposition", ContentDisposition(filename))
	if contentType != "" {
		params.Set("response-content-type", contentType)
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, ttl, params)
	if err != nil {
		return "", fmt.Errorf("file store: presign %s: %w", key, err)
	}
	return u.String(), nil
}

// Walk implements Store. Objects appear only when complete, so S3 has no
// temporary files.
func (s *S3) Walk(ctx context.Context, fn func(key string, modTime time.Time) error) error {
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("file store: list: %w", obj.Err)
		}
		if err := fn(obj.Key, obj.LastModified); err != nil {
			return err
		}
	}
	return nil
}

// Ping implements Store.
func (s *S3) Ping(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	if !ok {
		return fmt.Errorf("file store: bucket %s is missing", s.bucket)
	}
	return nil
}
