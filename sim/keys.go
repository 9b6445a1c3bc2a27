package sim

import (
	"crypto/subtle"
	"encoding/base64"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// apiKey extracts the caller's key from api-key (Azure), x-api-key
// (gateway style) or Authorization: Bearer. The key is used only to count
// per key; it is never logged, echoed or kept — the table stores a hash.
func apiKey(h http.Header) (string, bool) {
	if v := field(h, "Api-Key"); v != "" {
		return v, true
	}
	if v := field(h, "X-Api-Key"); v != "" {
		return v, true
	}
	return bearerKey(h)
}

// bearerKey is the key of Authorization: Bearer.
func bearerKey(h http.Header) (string, bool) {
	if v := field(h, "Authorization"); len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		if k := strings.TrimSpace(v[7:]); k != "" {
			return k, true
		}
	}
	return "", false
}

// keyHash is a stable 64-bit FNV-1a hash of a key. Stable, so a key lands
// in the same organization across runs and seeds.
func keyHash(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return h.Sum64()
}

// orgOf is the organization a key belongs to: its hash modulo the number
// of organizations. With the default single organization every key
// shares it, which is the case the gateway contract is about (a quiet key
// refused because of its organization's other keys).
func orgOf(key string, orgs int) int {
	if orgs <= 1 {
		return 0
	}
	return int(keyHash(key) % uint64(orgs))
}

// keyState is what the simulator knows about one key: counters and, on
// the gateway, its ceilings. Index is the key's public name in stats
// ("key-<index>").
type keyState struct {
	index    int
	org      int
	admitted uint64
	refused  uint64
	limits   *ceiling // gateway only

	earlyReturns, retriesOnTime, sdkRetries uint64 // the witness's counts
}

// keyTable maps key hashes to state, bounded by max entries.
type keyTable struct {
	byHash map[uint64]*keyState
	order  []*keyState
	max    int
}

// lookup returns the state of key, creating it while the table has room;
// ok is false when the table is full and the key is new.
func (t *keyTable) lookup(key string, orgs int, newLimits func() *ceiling) (*keyState, bool) {
	h := keyHash(key)
	if ks, ok := t.byHash[h]; ok {
		return ks, true
	}
	if len(t.order) >= t.max {
		return nil, false
	}
	if t.byHash == nil {
		t.byHash = make(map[uint64]*keyState)
	}
	ks := &keyState{index: len(t.order) + 1, org: orgOf(key, orgs)}
	if newLimits != nil {
		ks.limits = newLimits()
	}
	t.byHash[h] = ks
	t.order = append(t.order, ks)
	return ks, true
}

// keyHeaders are the headers other than Authorization that a key is read
// from, in any dialect: Azure's api-key, the gateways' x-api-key,
// Gemini's x-goog-api-key and Azure API Management's subscription key.
var keyHeaders = [...]string{"Api-Key", "X-Api-Key", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key"}

// queryKeys are the query parameters a key travels in: Gemini's ?key=,
// and the api-key, subscription-key (API Management), code (Azure
// Functions) and access_token others take.
var queryKeys = [...]string{"key", "api-key", "api_key", "apikey", "subscription-key", "code", "access_token"}

// keyInQuery reports whether a request's URL carries a key (queryKeys).
func keyInQuery(u *url.URL) bool {
	if u.RawQuery == "" {
		return false
	}
	q := u.Query()
	for _, name := range queryKeys {
		if q.Has(name) {
			return true
		}
	}
	return false
}

// foreignKey reports whether r carries a key other than Config.OnlyKey
// in any header a key is read from, in any dialect, or no key at all: a
// client that sends the expected key in one header and a stale one in
// another is caught too. A key in the URL is foreign whatever it is (a
// URL is logged on its way: a client that puts the throwaway key there
// puts the real one there too), and so is any Authorization but Bearer
// and Basic with the key for its password (or its user, without one).
// The comparison takes the same time wherever the keys differ.
func (s *Server) foreignKey(r *http.Request) bool {
	if keyInQuery(r.URL) {
		return true
	}
	want := []byte(s.cfg.OnlyKey)
	is := func(v string) bool { return subtle.ConstantTimeCompare([]byte(v), want) == 1 }
	seen := false
	for _, name := range keyHeaders {
		for _, v := range r.Header.Values(name) {
			seen = true
			if !is(v) {
				return true
			}
		}
	}
	for _, v := range r.Header.Values("Authorization") {
		seen = true
		scheme, cred, _ := strings.Cut(strings.TrimSpace(v), " ")
		cred = strings.TrimSpace(cred)
		switch {
		case strings.EqualFold(scheme, "bearer"):
			if !is(cred) {
				return true
			}
		case strings.EqualFold(scheme, "basic"):
			if !basicHolds(cred, is) {
				return true
			}
		default:
			return true
		}
	}
	return !seen
}

// basicHolds reports whether Basic credentials (base64 of user:password)
// hold the key: as the password, or as the user without one.
func basicHolds(cred string, is func(string) bool) bool {
	b, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return false
	}
	user, password, ok := strings.Cut(string(b), ":")
	if ok && password != "" {
		return is(password)
	}
	return is(user)
}

// keyRefusal is how a dialect's service answers a request without a key,
// and one with a wrong key.
type keyRefusal struct {
	missingStatus, wrongStatus int
	missing, wrong             string
}

// keyRefusals are the dialects' key refusals; azure's serves ietf too.
var keyRefusals = map[string]keyRefusal{
	DialectAzure: {http.StatusUnauthorized, http.StatusUnauthorized,
		"Access denied due to missing API key. Make sure to provide a valid key in the api-key header or as a Bearer token.",
		"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."},
	DialectOpenAI: {http.StatusUnauthorized, http.StatusUnauthorized,
		"You didn't provide an API key. Provide it in an Authorization header using Bearer auth.", "Incorrect API key provided."},
	DialectAnthropic: {http.StatusUnauthorized, http.StatusUnauthorized, "x-api-key header is required", "invalid x-api-key"},
	DialectGemini: {http.StatusForbidden, http.StatusBadRequest,
		"Method doesn't allow unregistered callers: send an API key in the x-goog-api-key header.", "API key not valid. Please pass a valid API key."},
}

// rejectKey answers a request without a key, or with a wrong one, as
// the dialect's service does.
func (s *Server) rejectKey(w http.ResponseWriter, wrong bool) {
	k, ok := keyRefusals[s.cfg.Dialect]
	if !ok {
		k = keyRefusals[DialectAzure]
	}
	status, msg := k.missingStatus, k.missing
	if wrong {
		status, msg = k.wrongStatus, k.wrong
	}
	s.reject(w, status, strconv.Itoa(status), msg)
}

// field is h.Get(name) for a name already in canonical form (every
// caller's is a constant; TestFieldNamesAreCanonical checks them): the
// first value, without canonicalizing the name again. The simulator reads
// five or six fields of every request (its key, its retry markers, its
// spillover), a few percent of a policy lab's CPU through Get.
func field(h http.Header, name string) string {
	if vs := h[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}
