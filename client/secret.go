package client

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted is what a recorded header value becomes when it holds a secret
// of the Target: a target that echoes the key back must not get it into
// the results file.
const Redacted = "[redacted]"

// A secret of at least secretWindow bytes counts as leaked when any
// secretWindow bytes of it in a row appear in a value, so that an echo of
// part of a key (its first 64 bytes, say, once the value is cut to
// results.MaxHeaderLen) is caught as well as the whole; a shorter secret
// must appear whole.
const secretWindow = 12

// minSecretLen: shorter values are not secrets. No API key or token is
// that short (they run from 32 bytes to several hundred), while a short
// header value such as "1" or "true", or a dummy key such as "sim", would
// match ordinary waits ("1" is in "1.5") and redact the very data the
// run is for.
const minSecretLen = 8

// secrets are the values a Target must never record: its key, the values
// of its extra request headers, and the query values of the URL it was
// given (some APIs take the key there). Nothing in it is ever printed.
type secrets struct {
	whole   []string            // secrets shorter than secretWindow
	windows map[string]struct{} // every secretWindow-byte run of the others
	// starts holds the first byte of every window: a place in a value
	// where none starts is passed over without a lookup (a Date vetted
	// against an "application/json" header took 18 lookups, now none;
	// BenchmarkCaptureHeaders).
	starts [256]bool
}

func newSecrets(cfg *Config) *secrets {
	values := []string{cfg.Key}
	for _, h := range cfg.Headers {
		values = append(values, h.Value)
	}
	for _, raw := range []string{cfg.URL, cfg.Endpoint} {
		if u, err := url.Parse(raw); err == nil {
			for _, vs := range u.Query() {
				values = append(values, vs...)
			}
		}
	}
	s := &secrets{windows: map[string]struct{}{}}
	for _, v := range values {
		v = recordable(v)
		switch {
		case len(v) < minSecretLen:
		case len(v) < secretWindow:
			s.whole = append(s.whole, v)
		default:
			for i := 0; i+secretWindow <= len(v); i++ {
				s.windows[v[i:i+secretWindow]] = struct{}{}
				s.starts[v[i]] = true
			}
		}
	}
	return s
}

// none reports whether there is no secret to find.
func (s *secrets) none() bool { return len(s.whole) == 0 && len(s.windows) == 0 }

// leaks reports whether v, a header value as received, would carry a
// secret into a row. It looks at the whole value, before any cut, as
// results.CleanHeader would leave it: with control characters dropped (a
// tab between the halves of an echoed key would be removed and join them).
func (s *secrets) leaks(v string) bool {
	v = recordable(v)
	for _, w := range s.whole {
		if strings.Contains(v, w) {
			return true
		}
	}
	if len(s.windows) > 0 {
		for i := 0; i+secretWindow <= len(v); i++ {
			if !s.starts[v[i]] {
				continue
			}
			if _, ok := s.windows[v[i:i+secretWindow]]; ok {
				return true
			}
		}
	}
	return false
}

// recordable is v as results.CleanHeader transforms it, before it trims
// and cuts: control characters dropped, invalid UTF-8 as U+FFFD. What
// CleanHeader records is a substring of it, so a secret not found here is
// not in the row. FuzzSecretsAgreeWithCleanHeader holds the two together.
func recordable(v string) string {
	if isPlain(v) {
		return v
	}
	out := make([]byte, 0, len(v)+8)
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		i += size
		if !unicode.IsControl(r) {
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out)
}

// isPlain reports whether v is printable ASCII, which recordable leaves
// as it is.
func isPlain(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}
