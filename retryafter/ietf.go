package retryafter

import (
	"net/http"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

// Quota units of a RateLimit-Policy item (its qu parameter): requests is
// the draft's default; tokens is no registered unit, but is what an LLM
// gateway would name its token quota.
const (
	unitRequests = "requests"
	unitTokens   = "tokens"
)

// rateLimitField reads the RateLimit field in whichever form it has: the
// current draft's List of service-limit items ("default";r=50;t=30), or
// draft 7's Dictionary (limit=100, remaining=0, reset=30). Neither form
// (malformed) is both nil: the draft says to ignore a malformed field.
func rateLimitField(h http.Header) (items []sfItem, dict []sfMember) {
	lines := h["Ratelimit"]
	if len(lines) == 0 {
		return nil, nil
	}
	v := sfField(lines)
	if list, ok := parseSFList(v); ok {
		for _, it := range list {
			if _, named := it.bare.name(); named && !it.inner {
				if _, ok := it.param("r"); ok {
					return list, nil
				}
			}
		}
	}
	if d, ok := parseSFDictionary(v); ok {
		for _, m := range d {
			switch m.key {
			case "limit", "remaining", "reset":
				return nil, d
			}
		}
	}
	return nil, nil
}

// policyField reads RateLimit-Policy: items named by a String or Token
// are the current draft's quota policies, items that are an Integer are
// draft 7's.
func policyField(h http.Header) (named, numeric []sfItem) {
	lines := h["Ratelimit-Policy"]
	if len(lines) == 0 {
		return nil, nil
	}
	list, ok := parseSFList(sfField(lines))
	if !ok {
		return nil, nil
	}
	// named is filtered in place: a long field is not copied whole.
	named = list[:0]
	for _, it := range list {
		switch _, isName := it.bare.name(); {
		case it.inner:
		case isName:
			named = append(named, it)
		case it.bare.kind == sfInteger:
			numeric = append(numeric, it)
		}
	}
	if len(named) == 0 {
		named = nil
	}
	return named, numeric
}

// quota is one policy of RateLimit-Policy: its quota q and unit qu.
type quota struct {
	q    int
	unit string
}

// policySet finds the RateLimit-Policy item of a name, the first of that
// name: by a scan while there are few, by a map from name to item once
// there are more than sfScanKeys, so n RateLimit items against n policies
// cost O(n), not O(n²).
type policySet struct {
	items  []sfItem
	byName map[string]int
	// probes counts the name comparisons and map probes: the tests hold
	// it linear in the number of lookups.
	probes int
}

func newPolicySet(items []sfItem) *policySet {
	s := &policySet{items: items}
	if len(items) > sfScanKeys {
		s.byName = make(map[string]int, len(items))
		for i := len(items) - 1; i >= 0; i-- { // the first of a name wins
			if n, ok := items[i].bare.name(); ok {
				s.byName[n] = i
			}
		}
	}
	return s
}

// quota returns the quota of policy name.
func (s *policySet) quota(name string) (quota, bool) {
	if s.byName != nil {
		s.probes++
		if i, ok := s.byName[name]; ok {
			return quotaOf(&s.items[i]), true
		}
		return quota{}, false
	}
	for i := range s.items {
		s.probes++
		if n, _ := s.items[i].bare.name(); n == name {
			return quotaOf(&s.items[i]), true
		}
	}
	return quota{}, false
}

func quotaOf(it *sfItem) quota {
	p := quota{q: results.None, unit: unitRequests}
	if v, ok := it.param("q"); ok {
		if q, ok := v.integer(); ok && q >= 0 {
			p.q = int(q)
		}
	}
	if v, ok := it.param("qu"); ok && v.kind == sfString {
		p.unit = v.s
	}
	return p
}

// ietfFamily reads the current draft (draft-ietf-httpapi-ratelimit-headers
// 08 to 11): each RateLimit item is the service limit of a policy, r its
// remaining quota (required: an item without a non-negative Integer r is
// malformed and skipped), t the seconds until it resets. Its policy's qu
// (RateLimit-Policy, default requests) says whether it is a request or a
// token limit, q its quota. Of several request (or token) limits the most
// restrictive is reported: the lowest r, then the longest t. Every item
// counts for the exhausted-limit wait, whatever its unit. items and
// policies are the current forms of RateLimit and RateLimit-Policy.
func ietfFamily(f *family, items []sfItem, policies *policySet) {
	*f = family{dialect: results.DialectIETF, source: results.WaitIETFReset,
		requests: unknownLimit(), tokens: unknownLimit()}
	f.present = items != nil || policies.items != nil
	for i := range items {
		it := &items[i]
		name, ok := it.bare.name()
		if !ok || it.inner {
			continue
		}
		rv, _ := it.param("r")
		r, ok := rv.integer()
		if !ok || r < 0 {
			continue
		}
		l := unknownLimit()
		l.remaining = int(r)
		if tv, ok := it.param("t"); ok {
			if t, ok := tv.integer(); ok && t >= 0 && float64(t)*1000 <= maxWaitMS {
				l.reset = float64(t) * 1000
			} else {
				l.resetBad = true
			}
		}
		unit := unitRequests
		if p, ok := policies.quota(name); ok {
			l.max, unit = p.q, p.unit
		}
		f.limits = append(f.limits, l)
		switch unit {
		case unitRequests:
			f.requests = tighter(f.requests, l)
		case unitTokens:
			f.tokens = tighter(f.tokens, l)
		}
	}
	// A policy alone (no RateLimit item for it) still says the limit,
	// when it is the only one of its unit.
	if !f.requests.known() {
		f.requests.max = onlyQuota(policies.items, unitRequests)
	}
	if !f.tokens.known() {
		f.tokens.max = onlyQuota(policies.items, unitTokens)
	}
}

// tighter returns the more restrictive of two limits: the lower
// remaining, then the longer reset.
func tighter(a, b limit) limit {
	switch {
	case !a.known():
		return b
	case b.remaining < a.remaining, b.remaining == a.remaining && b.reset > a.reset:
		return b
	}
	return a
}

// onlyQuota is the q of the only policy of unit, or results.None.
func onlyQuota(policies []sfItem, unit string) int {
	q, n := results.None, 0
	for i := range policies {
		if p := quotaOf(&policies[i]); p.unit == unit {
			q, n = p.q, n+1
		}
	}
	if n != 1 {
		return results.None
	}
	return q
}

// legacyFamily reads the older drafts: draft 7's RateLimit Dictionary
// (limit, remaining, reset: Integers, reset in delta seconds), else the
// separate RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of
// drafts 00 to 06. Its limit is counted in requests. dict and numeric are
// the draft-7 forms of RateLimit and RateLimit-Policy.
func legacyFamily(f *family, h http.Header, dict []sfMember, numeric []sfItem, clk *clock) {
	*f = family{dialect: results.DialectLegacy, source: results.WaitRateLimitReset,
		requests: unknownLimit(), tokens: unknownLimit()}
	if dict != nil {
		f.present = true
		l := unknownLimit()
		for _, m := range dict {
			v, ok := m.item.bare.integer()
			ok = ok && !m.item.inner && v >= 0
			switch m.key {
			case "limit":
				if ok {
					l.max = int(v)
				}
			case "remaining":
				if ok {
					l.remaining = int(v)
				}
			case "reset":
				if ok && float64(v)*1000 <= maxWaitMS {
					l.reset = float64(v) * 1000
				} else {
					l.resetBad = true
				}
			}
		}
		f.limits = append(f.limits, l)
		f.requests = l
	}
	if numeric != nil {
		f.present = true
	}
	sep := separateLimit(h, httpfield.IETFFields[2:5], clk, &f.present)
	f.limits = append(f.limits, sep)
	if !f.requests.known() {
		f.requests = sep
	}
}

// xRateLimitFamily reads X-RateLimit-Limit, -Remaining and -Reset, the
// fields before any draft (GitHub's, and many gateways'). Its limit is
// counted in requests.
func xRateLimitFamily(f *family, h http.Header, clk *clock) {
	*f = family{dialect: results.DialectXRate, source: results.WaitXRateLimitReset, tokens: unknownLimit()}
	f.requests = separateLimit(h, httpfield.IETFFields[5:8], clk, &f.present)
	f.limits = []limit{f.requests}
}

// separateLimit reads a limit from separate limit, remaining and reset
// fields. The limit is the leading integer of its value (older drafts and
// some servers append policies: "100, 100;w=60"); the reset is read by
// resetIn.
func separateLimit(h http.Header, names []string, clk *clock, present *bool) limit {
	l := fieldLimit(h, names, present, func(v string) (float64, bool) { return resetIn(v, clk.at()) })
	if max := httpfield.Field(h, names[0]); l.max < 0 {
		if i := strings.IndexAny(max, ",;"); i >= 0 {
			l.max = count(max[:i])
		}
	}
	return l
}

// Thresholds that tell a reset's form from its size (see resetIn).
const (
	epochSecondsFrom = 1e9  // 2001-09-09 in seconds since 1970; 31.7 years as a delay
	epochMillisFrom  = 1e12 // 2001-09-09 in ms since 1970
)

// resetIn reads a RateLimit-Reset or X-RateLimit-Reset value, in ms from
// ref (the response's Date, else the local clock). The drafts define delta
// seconds, but servers also send epoch seconds (GitHub's X-RateLimit-Reset,
// GitLab's RateLimit-Reset) or epoch milliseconds; the size of the value
// tells them apart: from 10^12 it is epoch ms, from 10^9 epoch seconds
// (no delay means 31.7 years), below that delta seconds. A time passed is
// 0; a decimal number is read as such ("1.5"); anything else, or a wait
// over results.MaxWaitMS, is unreadable.
func resetIn(v string, ref time.Time) (float64, bool) {
	x, ok := httpfield.Number(httpfield.TrimOWS(v))
	if !ok {
		return 0, false
	}
	refMS := float64(ref.UnixMilli()) + float64(ref.Nanosecond()%1e6)/1e6
	wait := x * 1000
	switch {
	case x >= epochMillisFrom:
		wait = x - refMS
	case x >= epochSecondsFrom:
		wait = x*1000 - refMS
	}
	wait = max(wait, 0)
	return wait, wait <= maxWaitMS
}
