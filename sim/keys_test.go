package sim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOnlyKeyCountsEveryKey: with OnlyKey, a key in the URL (Gemini's
// ?key=, whatever key it is), Basic credentials without the key, Azure
// API Management's Ocp-Apim-Subscription-Key with another key and an
// Authorization of another scheme are foreign keys, counted and
// refused, in every dialect; Basic with the key for its password is the
// key. No answer or stat holds a key.
func TestOnlyKeyCountsEveryKey(t *testing.T) {
	t.Parallel()
	const key, stale = "ptuprobe-referee-0123", "AIzaSyRealStaleKey0123456789"
	basic := func(user, password string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	}
	for _, d := range AllDialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			s, ts, path, body, hdr := keyedSim(t, d, key, func(c *Config) { c.OnlyKey = key })
			query := func(q string) string {
				if strings.Contains(path, "?") {
					return path + "&" + q
				}
				return path + "?" + q
			}
			foreign := []struct {
				name, path string
				hdr        []string
			}{
				{"a real key in ?key=", query("key=" + stale), hdr},
				{"the throwaway key in ?key=", query("key=" + key), hdr},
				{"a key in ?subscription-key=", query("subscription-key=" + stale), hdr},
				{"Basic with another password", path, with(hdr, "Authorization", basic("u", stale))},
				{"Ocp-Apim-Subscription-Key", path, with(hdr, "Ocp-Apim-Subscription-Key", stale)},
				{"another scheme", path, with(hdr, "Authorization", "SharedAccessSignature sr=x&sig="+stale)},
			}
			if d == DialectOpenAI { // its key is the Bearer, which Basic and the scheme replace: the key in api-key beside them
				for i := range foreign[3:] {
					foreign[3+i].hdr = append(foreign[3+i].hdr, "api-key", key)
				}
			}
			for _, tc := range foreign {
				resp, b := post(t, ts.URL, tc.path, body, tc.hdr...)
				if resp.StatusCode/100 != 4 || strings.Contains(b, stale) || strings.Contains(b, key) {
					t.Errorf("%s: %d %s, want a refusal naming no key", tc.name, resp.StatusCode, b)
				}
				if d == DialectGemini && strings.Contains(tc.path, "key=") && resp.StatusCode != http.StatusBadRequest {
					t.Errorf("%s: %d, want 400", tc.name, resp.StatusCode)
				}
			}
			st := s.Stats()
			if st.ForeignKeys != uint64(len(foreign)) || st.Admitted != 1 {
				t.Errorf("foreign keys %d, admitted %d; want %d, 1", st.ForeignKeys, st.Admitted, len(foreign))
			}
			if b, _ := json.Marshal(st); strings.Contains(string(b), stale) || strings.Contains(string(b), key) {
				t.Errorf("stats hold a key: %s", b)
			}
		})
	}
}

// with is hdr and one more header after it (replacing one of the same
// name).
func with(hdr []string, name, value string) []string {
	return append(append([]string(nil), hdr...), name, value)
}

// TestBasicHoldsTheKey: Basic credentials hold the key as their password,
// or as their user without one; nothing else does.
func TestBasicHoldsTheKey(t *testing.T) {
	t.Parallel()
	is := func(v string) bool { return v == "k" }
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for cred, want := range map[string]bool{
		enc("u:k"): true, enc("k:"): true, enc("k"): true, enc("k:other"): false, enc("u:"): false, "not base64!": false, "": false,
	} {
		if basicHolds(cred, is) != want {
			t.Errorf("%q: %v, want %v", cred, !want, want)
		}
	}
}

// TestFieldNamesAreCanonical: field reads a header by the name it is given,
// as h.Get would only for a name in canonical form; every name the
// simulator passes it (a literal in its sources, its retry markers and
// the SDK's retry count) must be one, or the field would never be found.
func TestFieldNamesAreCanonical(t *testing.T) {
	names := append([]string{sdkRetryHeader}, retryMarkers[:]...)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`\bfield\([^,()]+, "([^"]*)"\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	if len(names) < 10 {
		t.Fatalf("found %d names (%q): the scan of field's calls is broken", len(names), names)
	}
	for _, n := range names {
		if c := http.CanonicalHeaderKey(n); c != n {
			t.Errorf("field(h, %q): not canonical (%q): the header would never be read", n, c)
		}
	}
	h := http.Header{}
	h.Set("x-ms-spillover-deployment", "b")
	if got := field(h, "X-Ms-Spillover-Deployment"); got != h.Get("X-Ms-Spillover-Deployment") || got != "b" {
		t.Errorf("field = %q, want Get's %q", got, h.Get("X-Ms-Spillover-Deployment"))
	}
}
