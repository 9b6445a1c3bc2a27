package retryafter

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// rateLimitShapes build a RateLimit (and RateLimit-Policy) header of about
// n bytes in each of the shapes whose reading once grew with the square of
// the field: a List of distinct policies with as many RateLimit-Policy
// items, a draft-7 Dictionary of distinct keys, one item with distinct
// parameters.
var rateLimitShapes = []struct {
	name  string
	build func(n int) http.Header
}{
	{"policies", func(n int) http.Header {
		return http.Header{
			"Ratelimit":        {sfRepeat(n, func(i int) string { return `"p` + strconv.Itoa(i) + `";r=5;t=30` }, ", ")},
			"Ratelimit-Policy": {sfRepeat(n, func(i int) string { return `"p` + strconv.Itoa(i) + `";q=100;w=60` }, ", ")},
		}
	}},
	{"dictionary", func(n int) http.Header {
		return http.Header{"Ratelimit": {"limit=100, remaining=0, " + sfRepeat(n, func(i int) string { return "k" + strconv.Itoa(i) + "=1" }, ", ")}}
	}},
	{"parameters", func(n int) http.Header {
		return http.Header{"Ratelimit": {`"a";r=0;t=1` + sfRepeat(n, func(i int) string { return ";k" + strconv.Itoa(i) + "=1" }, "")}}
	}},
}

// sfRepeat joins member(0), member(1), … with sep until the result reaches
// n bytes.
func sfRepeat(n int, member func(int) string, sep string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(member(i))
	}
	return b.String()
}

// BenchmarkFromResponseRateLimit reads RateLimit fields of 4 KiB, 64 KiB
// and 1 MiB: the time per byte must stay flat as the field grows.
func BenchmarkFromResponseRateLimit(b *testing.B) {
	for _, shape := range rateLimitShapes {
		for _, n := range []int{4 << 10, 64 << 10, 1 << 20} {
			h := shape.build(n)
			b.Run(fmt.Sprintf("%s/%dKiB", shape.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					FromResponse(429, h, nil, testNow)
				}
			})
		}
	}
}

// TestRateLimitWorkIsLinear counts the work of reading n distinct keys,
// parameters and policies: the key comparisons and map probes of the
// search for a repeated key, and the lookups of a RateLimit item's policy.
// Linear is about n; a scan per key (the quadratic reading that once took
// 133 s for a 1 MiB field) is n²/2, 8 M at n = 4096. It counts, so it
// cannot be fooled by a fast or a loaded machine.
func TestRateLimitWorkIsLinear(t *testing.T) {
	t.Parallel()
	bound := func(n int) int { return 2*n + sfScanKeys*sfScanKeys }
	for _, n := range []int{sfScanKeys / 2, 64, 4096} {
		dict := sfMembers(n, func(i int) string { return "k" + strconv.Itoa(i) + "=1" }, ", ")
		p := sfParser{s: dict}
		if d, ok := p.dictionary(); !ok || len(d) != n {
			t.Fatalf("dictionary of %d keys: %d members, %v", n, len(d), ok)
		}
		if p.work > bound(n) {
			t.Errorf("a Dictionary of %d distinct keys took %d key comparisons, want at most %d", n, p.work, bound(n))
		}

		p = sfParser{s: `"a";r=0` + sfMembers(n, func(i int) string { return ";k" + strconv.Itoa(i) + "=1" }, "")}
		if l, ok := p.list(); !ok || len(l) != 1 || len(l[0].params) != n+1 {
			t.Fatalf("an item of %d parameters: %+v, %v", n, l, ok)
		}
		if p.work > bound(n) {
			t.Errorf("%d distinct parameters took %d key comparisons, want at most %d", n, p.work, bound(n))
		}

		items, ok := parseSFList(sfMembers(n, func(i int) string { return `"p` + strconv.Itoa(i) + `";r=5;t=30` }, ", "))
		policies, ok2 := parseSFList(sfMembers(n, func(i int) string { return `"p` + strconv.Itoa(i) + `";q=100` }, ", "))
		if !ok || !ok2 {
			t.Fatal("the lists do not parse")
		}
		set := newPolicySet(policies)
		var f family
		ietfFamily(&f, items, set)
		if f.requests.max != 100 || len(f.limits) != n {
			t.Fatalf("%d items against %d policies: %+v", n, n, f.requests)
		}
		if set.probes > bound(n) {
			t.Errorf("%d items against %d policies took %d name comparisons, want at most %d", n, n, set.probes, bound(n))
		}
	}
	// A repeated key keeps its first place and takes its last value,
	// whether the keys are scanned or mapped.
	for _, n := range []int{sfScanKeys / 2, 4 * sfScanKeys} {
		in := sfMembers(n, func(i int) string { return "k" + strconv.Itoa(i) + "=" + strconv.Itoa(i) }, ", ") + ", k0=-1, k1;x"
		d, ok := parseSFDictionary(in)
		if !ok || len(d) != n || d[0].key != "k0" || d[0].item.bare.i != -1 || d[1].item.bare.kind != sfBoolean || d[n-1].item.bare.i != int64(n-1) {
			t.Errorf("repeats among %d keys: %+v, %v", n, d, ok)
		}
		p := sfParser{s: `"a"` + sfMembers(n, func(i int) string { return ";k" + strconv.Itoa(i) + "=" + strconv.Itoa(i) }, "") + ";k0=-1"}
		l, ok := p.list()
		if !ok || len(l[0].params) != n || l[0].params[0].value.i != -1 {
			t.Errorf("repeats among %d parameters: %+v, %v", n, l, ok)
		}
		pols, _ := parseSFList(sfMembers(n, func(i int) string { return `"p` + strconv.Itoa(i) + `";q=` + strconv.Itoa(i) }, ", ") + `, "p0";q=99`)
		if q, ok := newPolicySet(pols).quota("p0"); !ok || q.q != 0 {
			t.Errorf("among %d policies, the first p0 is %+v, %v; want q=0", n, q, ok)
		}
	}
}

// sfMembers joins member(0) … member(n-1) with sep.
func sfMembers(n int, member func(int) string, sep string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(member(i))
	}
	return b.String()
}

// FuzzStructuredField parses any value as a List, a Dictionary and an
// Item: no panic, and the work of the search for repeated keys stays
// linear in the length of the value: every key takes at least two bytes
// of it (the key and a separator) and costs at most sfScanKeys
// comparisons (a scan of a short list) or one map probe.
func FuzzStructuredField(f *testing.F) {
	for _, s := range []string{`"default";r=50;t=30`, `limit=100, remaining=0, reset=30`, `a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid`,
		`:aGVsbG8=:`, `:a=GVsbG8=:`, `1.5;a;b=?0;a=-3`, `k0=1, k1=1, k2=1, k3=1, k4=1, k5=1, k6=1, k7=1, k8=1, k9=1, k0=2`, `("a" "b");p=1`, `a;a;b;c;d;e;f;g;h;h;h;h;h;h`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bound := sfScanKeys*len(s)/2 + sfScanKeys*sfScanKeys
		for _, parse := range []func(p *sfParser) bool{
			func(p *sfParser) bool { _, ok := p.list(); return ok },
			func(p *sfParser) bool { _, ok := p.dictionary(); return ok },
			func(p *sfParser) bool { _, ok := p.item(); return ok },
		} {
			p := sfParser{s: s}
			parse(&p)
			if p.work > bound {
				t.Fatalf("%d key comparisons for %d bytes", p.work, len(s))
			}
		}
	})
}
