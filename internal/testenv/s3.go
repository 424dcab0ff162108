package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// versitygwPath finds the versitygw binary: on PATH, or where `go install`
// puts it.
func versitygwPath() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	if gopath := os.Getenv("GOPATH"); gopath != "" {
		dirs = append(dirs, filepath.Join(gopath, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("versitygw not found (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
}

// S3 starts an S3-compatible server (versitygw) on loopback for the test
// and returns a --files spec naming a fresh bucket on it, with the
// credentials set in the environment. Without versitygw the test is
// skipped, except under CI, where it fails.
func S3(t testing.TB) string {
	t.Helper()
	spec, _ := S3At(t, t.TempDir())
	return spec
}

// FileBackend names a file store to test on.
type FileBackend struct {
	Name string // "folder" or "s3"
}

// EachFiles runs fn as a subtest on the folder store and on S3, the two
// side by side.
func EachFiles(t *testing.T, fn func(t *testing.T, fb FileBackend)) {
	t.Helper()
	for _, fb := range []FileBackend{{Name: "folder"}, {Name: "s3"}} {
		t.Run(fb.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, fb)
		})
	}
}

// Files returns the --files setting of a file backend for the test.
func Files(t testing.TB, fb FileBackend) string {
	t.Helper()
	if fb.Name == "s3" {
		return S3(t)
	}
	return filepath.Join(t.TempDir(), "files")
}
