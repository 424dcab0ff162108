package testenv

import (
	"bytes"
	"os/exec"
	"testing"
)

// SmallDisk mounts a file system of size (mount's -o size=, e.g. "8m")
// for the test and returns its folder, or skips the test when this
// process may not mount one: a full disk is then not tested.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill up (%v: %s): a full disk is not tested", size, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
