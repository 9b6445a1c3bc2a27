package sim

import (
	"hash/fnv"
	"net/http"
	"strings"
)

// apiKey extracts the caller's key from api-key (Azure), x-api-key
// (gateway style) or Authorization: Bearer. The key is used only to count
// per key; it is never logged, echoed or kept — the table stores a hash.
func apiKey(h http.Header) (string, bool) {
	if v := h.Get("Api-Key"); v != "" {
		return v, true
	}
	if v := h.Get("X-Api-Key"); v != "" {
		return v, true
	}
	return bearerKey(h)
}

// bearerKey is the key of Authorization: Bearer.
func bearerKey(h http.Header) (string, bool) {
	if v := h.Get("Authorization"); len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
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
