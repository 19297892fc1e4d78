// Package auth holds the renderer's authentication rules: the protocol
// version it speaks, the shared-password comparison, the startup password
// policy and the list of field names that must never be echoed back.
// It is pure functions, with no HTTP.
package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ProtocolVersion is the renderer protocol version gorender speaks; a
// request's protocolVersion must equal it exactly (PROTOCOL.md §4.1).
const ProtocolVersion = "2.0.0"

// MinPasswordLength is the length under which StartupPolicy warns about the
// configured password.
const MinPasswordLength = 16

// weakPasswords are well-known placeholder passwords (compared
// case-insensitively) that StartupPolicy warns about.
var weakPasswords = []string{
	"devPassword", "myPassword1", "password", "changeme",
	"admin", "secret", "test", "renderer",
}

// Password is the configured shared secret (RENDERER_PASSWORD), kept only as
// its SHA-256 digest. The zero value means no password is configured.
type Password struct {
	digest     [sha256.Size]byte
	configured bool
}

// NewPassword returns the Password for secret; an empty secret means that no
// password is configured and every request passes.
func NewPassword(secret string) Password {
	if secret == "" {
		return Password{}
	}
	return Password{digest: sha256.Sum256([]byte(secret)), configured: true}
}

// Configured reports whether a password is configured.
func (p Password) Configured() bool {
	return p.configured
}

// Matches reports whether submitted (empty when the request carries none)
// is accepted: always when no password is configured, else when its SHA-256
// digest equals the configured one, compared in constant time.
func (p Password) Matches(submitted string) bool {
	if !p.configured {
		return true
	}
	got := sha256.Sum256([]byte(submitted))
	return subtle.ConstantTimeCompare(got[:], p.digest[:]) == 1
}

// StartupPolicy applies PROTOCOL.md §4.2 to the configured secret. Without a
// password it returns an error unless at least one of RAILS_ENV / NODE_ENV is
// set and every one that is set is "development" or "test" (both unset counts
// as production). With a password it returns warnings (which never contain
// the password) when it is short or a well-known weak one.
func StartupPolicy(secret string, getenv func(string) string) (warnings []string, err error) {
	if secret == "" {
		railsEnv, nodeEnv := getenv("RAILS_ENV"), getenv("NODE_ENV")
		if !allowsNoPassword(railsEnv, nodeEnv) {
			return nil, fmt.Errorf("RENDERER_PASSWORD is not set, which is only allowed when every one of RAILS_ENV / NODE_ENV that is set is \"development\" or \"test\" (both unset counts as production); got RAILS_ENV=%q NODE_ENV=%q: set RENDERER_PASSWORD to the password configured in the Rails app", railsEnv, nodeEnv)
		}
		return []string{fmt.Sprintf("RENDERER_PASSWORD is not set: every request is accepted without a password (allowed because RAILS_ENV=%q NODE_ENV=%q)", railsEnv, nodeEnv)}, nil
	}
	if n := utf8.RuneCountInString(secret); n < MinPasswordLength {
		warnings = append(warnings, fmt.Sprintf("RENDERER_PASSWORD is only %d characters long; use at least %d random characters", n, MinPasswordLength))
	}
	for _, weak := range weakPasswords {
		if strings.EqualFold(secret, weak) {
			warnings = append(warnings, "RENDERER_PASSWORD is a well-known weak password; use a long random secret")
			break
		}
	}
	return warnings, nil
}

// allowsNoPassword reports whether the environments permit running without a
// password: at least one is set and every one that is set is development or
// test.
func allowsNoPassword(envs ...string) bool {
	set := 0
	for _, env := range envs {
		if env == "" {
			continue
		}
		set++
		if env != "development" && env != "test" {
			return false
		}
	}
	return set > 0
}

// sensitiveNames are the field names (lower case) never echoed back in an
// error body (PROTOCOL.md §4.1).
var sensitiveNames = map[string]bool{
	"password":      true,
	"token":         true,
	"secret":        true,
	"api_key":       true,
	"api-key":       true,
	"apikey":        true,
	"authorization": true,
	"auth_token":    true,
	"auth-token":    true,
	"authtoken":     true,
	"access_token":  true,
	"accesstoken":   true,
	"bearer":        true,
	"credentials":   true,
}

// IsSensitiveName reports whether a received field name is one that must
// never be echoed (PROTOCOL.md §4.1), case-insensitively. A bracket suffix
// and surrounding spaces are ignored, so "password[]" and " token[0]" are
// sensitive too.
func IsSensitiveName(name string) bool {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	return sensitiveNames[strings.ToLower(strings.TrimSpace(name))]
}
