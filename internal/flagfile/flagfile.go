// Package flagfile reads the files that the program's flags name (a
// certificate, its key, CA certificates, an auditor's heads) with a
// bound: such a file is small, and a flag pointed at a device or a pipe
// that never ends (/dev/zero) must be refused, not read until memory
// runs out.
package flagfile

import (
	"fmt"
	"io"
	"os"
)

// Max is the most a file a flag names may hold: far more than any
// certificate chain, key, set of CA certificates or list of heads needs.
const Max = 1 << 20

// TooLargeError means that a file holds more than Max bytes, or never
// ends (a device, a pipe).
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string {
	if e.Max%(1<<20) == 0 {
		return fmt.Sprintf("larger than %d MiB", e.Max>>20)
	}
	return fmt.Sprintf("larger than %d bytes", e.Max)
}

// Read reads the file at path, refusing with a *TooLargeError one that
// holds more than limit bytes: it reads at most limit+1 of them, so that
// a file that never ends takes no more memory.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, &TooLargeError{Max: limit}
	}
	return raw, nil
}
