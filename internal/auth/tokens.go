package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// Token prefixes make leaked tokens recognisable to secret scanners.
const (
	accessPrefix  = "pwa_"
	refreshPrefix = "pwr_"
)

// newToken returns a random token (256 bits) with the given prefix and its hash.
func newToken(prefix string) (string, []byte) {
	token := randomString(prefix, 32)
	h := hashToken(token)
	return token, h[:]
}

// randomString is prefix followed by n random bytes, base64url-encoded.
func randomString(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is the stored form of a token. Tokens carry 256 random bits, so
// a fast hash is enough: nobody can guess their way back from it.
func hashToken(token string) [32]byte {
	return sha256.Sum256([]byte(token))
}

func newFamily() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}
