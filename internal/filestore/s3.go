package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"planwerk/internal/fault"
)

// S3 keeps files in an S3-compatible bucket. Objects appear only when an
// upload completes. Downloads go through the service's signed links, or,
// with downloads=presigned, straight to the bucket's presigned URLs. Every
// call fails within the caller's context and the connection limits (see
// s3Limits), whichever ends first, and a failure of the store is marked
// with fault.
type S3 struct {
	client *minio.Client
	core   minio.Core
	bucket string
	limits s3Limits
	// presign hands out the bucket's own URLs: the bytes bypass the
	// service, but such a URL answers GET only (the method is signed).
	presign bool
}

// partSize bounds the memory of one streaming upload: a part is held
// while it is sent. A file no bigger than one part goes in one request.
const partSize = 8 << 20

func openS3(ctx context.Context, u *url.URL, accessKey, secretKey string) (*S3, error) {
	return openS3With(ctx, u, accessKey, secretKey, defaultS3Limits())
}

func openS3With(ctx context.Context, u *url.URL, accessKey, secretKey string, limits s3Limits) (*S3, error) {
	bucket := u.Host
	q := u.Query()
	endpoint := q.Get("endpoint")
	if bucket == "" || endpoint == "" {
		return nil, errors.New("file store: s3://BUCKET?endpoint=HOST:PORT needs a bucket and an endpoint")
	}
	secure := q.Get("secure") != "false"
	var presign bool
	switch q.Get("downloads") {
	case "", "service":
	case "presigned":
		presign = true
	default:
		return nil, fmt.Errorf("file store: downloads=%q: want service or presigned", q.Get("downloads"))
	}
	transport, err := s3Transport(secure, limits)
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	region := q.Get("region")
	client, err := minio.New(endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(accessKey, secretKey, ""),
		Secure:       secure,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    transport,
		MaxRetries:   limits.attempts,
	})
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	s := &S3{client: client, core: minio.Core{Client: client}, bucket: bucket, limits: limits, presign: presign}
	if err := s.ensureBucket(ctx, region); err != nil {
		return nil, err
	}
	if region == "" {
		// minio-go asks for a bucket's region once and remembers it; asking
		// now keeps Presign free of network calls later.
		if _, err := client.GetBucketLocation(ctx, bucket); err != nil {
			return nil, storeError("bucket region", bucket, err)
		}
	}
	return s, nil
}

func (s *S3) ensureBucket(ctx context.Context, region string) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return storeError("bucket", s.bucket, err)
	}
	if exists {
		return nil
	}
	// Another instance starting at the same time may create it first.
	err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region})
	if code := minio.ToErrorResponse(err).Code; err != nil && code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
		return storeError("create bucket", s.bucket, err)
	}
	return nil
}

// storeError marks a failure of a call to the store: full when the store
// says it has no room, unavailable otherwise (unreachable, too slow,
// failing, or refusing Planwerk's credentials: the request is never at
// fault). nil stays nil.
func storeError(op, key string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("file store: %s %s: %w", op, key, err)
	if storageFull(err) {
		return fault.Full(fault.FileStore, err)
	}
	return fault.Unavailable(fault.FileStore, err)
}

// storageFull reports whether an S3 error response says the store, a
// bucket quota or the disk behind them is full. EntityTooLarge is not
// among them: it is about one object's size.
func storageFull(err error) bool {
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) {
		return false
	}
	if resp.StatusCode == http.StatusInsufficientStorage {
		return true
	}
	switch resp.Code {
	case "XMinioStorageFull", "XMinioAdminBucketQuotaExceeded", "QuotaExceeded",
		"InsufficientStorage", "StorageFull", "NoSpaceLeftOnDevice":
		return true
	}
	return false
}

// sourceError is an error of the reader given to Put: the caller's own
// comes back unchanged, so that callers recognise the errors of their
// readers; the end of ctx while reading is wrapped, unmarked: the store
// was not being waited on.
func sourceError(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("file store: put %s: %w", key, err)
	}
	return err
}

// Put implements Store. A file that fits in one part is sent in one
// request; a bigger one as a multipart upload, which is aborted when
// anything fails, so that no parts are left behind.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	r = readerWithContext(ctx, r)
	buf := make([]byte, partSize)
	n, err := readPart(r, buf)
	switch {
	case err == io.EOF:
		return int64(n), s.putWhole(ctx, key, buf[:n])
	case err != nil:
		return int64(n), sourceError(ctx, key, err)
	}
	return s.putMultipart(ctx, key, r, buf)
}

// readPart fills buf from r, or reads until r ends (io.EOF) or fails.
// Unlike io.ReadFull it keeps an error that comes with the bytes that
// fill buf: a reader need not repeat its error on the next call.
func readPart(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// putWhole stores a small file with one request: it appears complete or
// not at all. A request cut off after the store took it may still have
// stored it; no upload names such a file, and Sweep removes it.
func (s *S3) putWhole(ctx context.Context, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType:      octetStream,
		DisableMultipart: true,
	})
	return storeError("put", key, err)
}

// putMultipart sends first, a full part, and the rest of r as a multipart
// upload. As with putWhole, a completion cut off may still have stored
// the file, which Sweep then removes.
func (s *S3) putMultipart(ctx context.Context, key string, r io.Reader, first []byte) (int64, error) {
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, key, minio.PutObjectOptions{ContentType: octetStream})
	if err != nil {
		// A request cut off may still have started an upload on the store;
		// its ID is unknown here, and Sweep aborts it once it is old.
		return int64(len(first)), storeError("put", key, err)
	}
	n, err := s.putParts(ctx, key, id, r, first)
	if err != nil {
		s.abort(ctx, key, id)
	}
	return n, err
}

// putParts uploads buf, already full, and then r part by part, and
// completes the upload.
func (s *S3) putParts(ctx context.Context, key, id string, r io.Reader, buf []byte) (int64, error) {
	var parts []minio.CompletePart
	var total int64
	for n, last := len(buf), false; n > 0; {
		p, err := s.core.PutObjectPart(ctx, s.bucket, key, id, len(parts)+1, bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			return total, storeError("put part of", key, err)
		}
		parts = append(parts, completed(p))
		total += int64(n)
		if last {
			break
		}
		n, err = readPart(r, buf)
		switch {
		case err == io.EOF:
			last = true
		case err != nil:
			return total + int64(n), sourceError(ctx, key, err)
		}
	}
	if _, err := s.core.CompleteMultipartUpload(ctx, s.bucket, key, id, parts, minio.PutObjectOptions{}); err != nil {
		return total, storeError("complete", key, err)
	}
	return total, nil
}

// completed is how the completion of an upload names one of its parts.
func completed(p minio.ObjectPart) minio.CompletePart {
	return minio.CompletePart{
		PartNumber:        p.PartNumber,
		ETag:              p.ETag,
		ChecksumCRC32:     p.ChecksumCRC32,
		ChecksumCRC32C:    p.ChecksumCRC32C,
		ChecksumSHA1:      p.ChecksumSHA1,
		ChecksumSHA256:    p.ChecksumSHA256,
		ChecksumCRC64NVME: p.ChecksumCRC64NVME,
	}
}

// abort discards a failed multipart upload. It has a context of its own,
// since the caller's may be what ended the upload, bounded by
// limits.cleanup. The caller waits for it at most limits.cleanupWait: a
// store that answers is done by then, and one that stopped answering
// holds the request no longer. An upload that cannot be aborted now is
// aborted by Sweep later.
func (s *S3) abort(ctx context.Context, key, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.limits.cleanup)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		_ = s.AbortIncomplete(ctx, Incomplete{Key: key, UploadID: id})
	}()
	wait := time.NewTimer(s.limits.cleanupWait)
	defer wait.Stop()
	select {
	case <-done:
	case <-wait.C:
	}
}

// Open implements Store. The file's reader marks the errors of a transfer
// cut off midway as the store's. Reading after a seek asks the store for
// the object from the new offset on.
func (s *S3) Open(ctx context.Context, key string) (io.ReadSeekCloser, int64, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, storeError("open", key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, 0, ErrNotFound
		}
		return nil, 0, storeError("open", key, err)
	}
	return s3Object{Object: obj, key: key}, st.Size, nil
}

// s3Object is a stored file being read. Closing is the object's own.
type s3Object struct {
	*minio.Object
	key string
}

func (o s3Object) Read(p []byte) (int, error) {
	n, err := o.Object.Read(p)
	if err != nil && err != io.EOF {
		err = storeError("read", o.key, err)
	}
	return n, err
}

func (o s3Object) Seek(offset int64, whence int) (int64, error) {
	n, err := o.Object.Seek(offset, whence)
	if err != nil {
		err = storeError("seek", o.key, err)
	}
	return n, err
}

func (o s3Object) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.Object.ReadAt(p, off)
	if err != nil && err != io.EOF {
		err = storeError("read", o.key, err)
	}
	return n, err
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return storeError("delete", key, err)
	}
	return nil
}

// Presign implements Store: with downloads=presigned the bucket's own
// presigned GET URL, else "" (the service's links serve the file),
// answering
// with the upload's filename as an attachment and its content type,
// except a type that a browser would render or run (see ActiveContent):
// such files are served as application/octet-stream. Signing is local:
// the bucket's region is known (configured, or asked for at start-up).
func (s *S3) Presign(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error) {
	if !s.presign {
		return "", nil
	}
	params := url.Values{}
	params.Set("response-content-disposition", ContentDisposition(filename))
	params.Set("response-content-type", servedType(contentType))
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, ttl, params)
	if err != nil {
		return "", storeError("presign", key, err)
	}
	return u.String(), nil
}

// Walk implements Store. Objects appear only when complete, so S3 has no
// temporary files; its unfinished writes are listed by WalkIncomplete.
func (s *S3) Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	objects := s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true})
	defer stopListing(cancel, objects)
	for obj := range objects {
		if obj.Err != nil {
			return storeError("list", s.bucket, obj.Err)
		}
		if err := fn(obj.Key, obj.LastModified); err != nil {
			return err
		}
	}
	return nil
}

// WalkIncomplete implements Store.
func (s *S3) WalkIncomplete(ctx context.Context, prefix string, fn func(Incomplete) error) error {
	ctx, cancel := context.WithCancel(ctx)
	uploads := s.client.ListIncompleteUploads(ctx, s.bucket, prefix, true)
	defer stopListing(cancel, uploads)
	for u := range uploads {
		if u.Err != nil {
			return storeError("list incomplete uploads in", s.bucket, u.Err)
		}
		if err := fn(Incomplete{Key: u.Key, UploadID: u.UploadID, Started: u.Initiated}); err != nil {
			return err
		}
	}
	return nil
}

// stopListing ends a listing that the caller may have left early: it
// stops the lister goroutine and empties its channel, so that the
// goroutine never blocks on a send that no one reads.
func stopListing[T any](cancel context.CancelFunc, ch <-chan T) {
	cancel()
	for range ch {
	}
}

// AbortIncomplete implements Store.
func (s *S3) AbortIncomplete(ctx context.Context, u Incomplete) error {
	err := s.core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID)
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchUpload" {
		return storeError("abort upload of", u.Key, err)
	}
	return nil
}

// Ping implements Store.
func (s *S3) Ping(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return storeError("ping", s.bucket, err)
	}
	if !ok {
		return storeError("ping", s.bucket, errors.New("the bucket is missing"))
	}
	return nil
}
