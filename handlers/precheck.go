package handlers

import (
	"net/http"
	"unicode/utf8"

	"github.com/gorender/gorender/auth"
)

const (
	// maxEchoedProtocolBytes bounds how much of a received protocolVersion
	// the 412 body echoes.
	maxEchoedProtocolBytes = 100
	// maxEchoedBytes bounds what any error answer echoes of what the client
	// sent (field names, ids, file names), as the 1,000-character rule of
	// the rendering request does.
	maxEchoedBytes = 1000
)

// Precheck runs PROTOCOL.md §4 in order: protocol version (412) unless
// checkProtocol is false, then password (401). A missing password is the
// empty string; a deferred error on the password field (a raw request's
// non-Bearer Authorization header) makes it missing here and is reported by
// the shape checks afterwards.
func Precheck(f *Fields, pw auth.Password, rendererVersion string, checkProtocol bool) *HTTPError {
	if checkProtocol {
		if herr := checkProtocolVersion(f, rendererVersion, false); herr != nil {
			return herr
		}
	}
	return checkPassword(f, pw)
}

// EarlyPrecheck returns the gate for DecodeOptions.BeforeFirstFile and
// BeforeBody (PROTOCOL.md §6.1): on the fields seen so far it answers 412
// when a protocolVersion was already received and mismatches, else 401 when
// the password seen so far (possibly none) does not pass. A missing
// protocolVersion is left to Precheck, which runs once the body is decoded,
// except for a raw JS request, whose headers are all its metadata: there the
// gate is exactly Precheck.
func EarlyPrecheck(pw auth.Password, rendererVersion string, checkProtocol bool) func(*Fields) *HTTPError {
	return func(f *Fields) *HTTPError {
		if checkProtocol {
			if herr := checkProtocolVersion(f, rendererVersion, !f.metadataComplete); herr != nil {
				return herr
			}
		}
		return checkPassword(f, pw)
	}
}

// checkPassword answers 401 `Wrong password` when the submitted password
// does not pass.
func checkPassword(f *Fields, pw auth.Password) *HTTPError {
	submitted, _ := f.Text("password")
	if !pw.Matches(submitted) {
		return &HTTPError{Status: http.StatusUnauthorized, Body: "Wrong password"}
	}
	return nil
}

// checkProtocolVersion answers 412 when protocolVersion is not exactly
// auth.ProtocolVersion. A missing, null or empty one is "MISSING", unless
// allowMissing.
func checkProtocolVersion(f *Fields, rendererVersion string, allowMissing bool) *HTTPError {
	received, present := f.Text("protocolVersion")
	if received == auth.ProtocolVersion {
		return nil
	}
	missing := !present || received == ""
	if missing && allowMissing {
		return nil
	}
	return &HTTPError{
		Status: http.StatusPreconditionFailed,
		Body:   ProtocolMismatchBody(received, missing, f.EchoNames(), rendererVersion),
	}
}

// ProtocolMismatchBody is the exact body of the 412 of PROTOCOL.md §4.1:
// received is the request's protocolVersion (truncated when long), or,
// when missing, names (Fields.EchoNames) are listed instead.
func ProtocolMismatchBody(received string, missing bool, names string, rendererVersion string) string {
	request := "request protocol " + truncateEcho(received, maxEchoedProtocolBytes)
	if missing {
		request = "MISSING (received fields: " + names + ")"
	}
	return "Unsupported renderer protocol version " + request +
		" does not match installed renderer protocol " + auth.ProtocolVersion +
		" for version " + rendererVersion + ".\n" +
		"Update either the renderer or the Rails server so that both use the same protocol version."
}

// echo is what an answer repeats of a value the client sent: at most
// maxEchoedBytes of it.
func echo(s string) string { return truncateEcho(s, maxEchoedBytes) }

// truncateEcho cuts s to at most limit bytes at a rune boundary, marking the
// cut with "...".
func truncateEcho(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
