// Package auth issues and checks credentials: password hashes, OAuth2
// password and refresh grants, and bearer tokens; it keeps the tables of
// tokens and API clients.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"planwerk/internal/gate"
)

// HashCost is the work of one argon2id hash: passes over memory, and
// memory in KiB. Verification reads the cost from the stored hash, so a
// hash keeps the cost it was made with.
type HashCost struct {
	Time      uint32
	MemoryKiB uint32
}

// DefaultHashCost is OWASP's recommended minimum for argon2id (19 MiB, 2
// passes), the cost of every hash the service makes.
var DefaultHashCost = HashCost{Time: 2, MemoryKiB: 19 * 1024}

// Argon2id parameters besides the cost.
const (
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Hasher hashes and checks passwords with argon2id. It bounds how many
// hashes run at once, so a burst of logins cannot exhaust memory, and
// shares them among tenants, so that one tenant's burst of logins cannot
// keep another's users out.
type Hasher struct {
	slots *gate.Gate
	cost  HashCost
	dummy string // a real hash to check against for unknown users
}

// NewHasher returns a Hasher running at most parallel hashes at once, at
// most half of them (at least one) for one tenant.
func NewHasher(parallel int) *Hasher {
	return NewHasherCost(parallel, DefaultHashCost)
}

// NewHasherCost is NewHasher making hashes of the given cost. Only tests
// take less than DefaultHashCost, so that the many users they create
// stay quick; no setting of the service lowers it.
func NewHasherCost(parallel int, cost HashCost) *Hasher {
	if parallel < 1 {
		parallel = 1
	}
	h := &Hasher{cost: cost, slots: gate.New("password hashing", gate.Options{Capacity: parallel, PerKey: max(1, parallel/2), MaxQueue: 256})}
	h.dummy, _ = h.Hash(context.Background(), "planwerk-dummy-password")
	return h
}

// Share is the fair share of hashing, for monitoring.
func (h *Hasher) Share() *gate.Gate { return h.slots }

// Hash returns the PHC-formatted argon2id hash of password.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key, err := h.derive(ctx, password, salt, h.cost.Time, h.cost.MemoryKiB, argonThreads, argonKeyLen)
	if err != nil {
		return "", err
	}
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, h.cost.MemoryKiB, h.cost.Time, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether password matches encoded, comparing in constant time.
func (h *Hasher) Verify(ctx context.Context, password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("verify password: not an argon2id hash")
	}
	var version int
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errors.New("verify password: unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil {
		return false, fmt.Errorf("verify password: parameters: %w", err)
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("verify password: salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, fmt.Errorf("verify password: key: %w", err)
	}
	got, err := h.derive(ctx, password, salt, time, memory, threads, uint32(len(want)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// VerifyDummy spends the same time as Verify for a user that does not
// exist, so response times do not reveal which e-mail addresses are known.
func (h *Hasher) VerifyDummy(ctx context.Context, password string) {
	_, _ = h.Verify(ctx, password, h.dummy)
}

func (h *Hasher) derive(ctx context.Context, password string, salt []byte, time, memory uint32, threads uint8, keyLen uint32) ([]byte, error) {
	// Refuse parameters no hash of ours has, so a tampered row cannot make
	// verification allocate without bound.
	if memory > 1<<20 || time > 16 || threads == 0 || keyLen == 0 || keyLen > 64 {
		return nil, errors.New("verify password: argon2 parameters out of range")
	}
	release, err := h.slots.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return argon2.IDKey([]byte(password), salt, time, memory, threads, keyLen), nil
}
