package sim

import (
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
)

// FuzzParsedBodies: through the cache, a body parses as parseRequest
// parses it, the first time and again (a retry), whatever bodies came
// between, in any of the kinds.
func FuzzParsedBodies(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":7}`), []byte(`{"prompt":"a cat","n":2}`), uint8(0))
	f.Add([]byte(`{"messages":[]}`), []byte(`{"contents":[{"parts":[{"text":"x"}]}]}`), uint8(3))
	f.Add([]byte(`not json`), []byte(`{"input":"x","max_output_tokens":5}`), uint8(4))
	seed := maphash.MakeSeed()
	f.Fuzz(func(t *testing.T, a, b []byte, k uint8) {
		c := &parsedBodies{}
		kind := bodyKind(k % 5)
		for _, body := range [][]byte{a, b, a, a, b} {
			want, wantErr := parseRequest(body, kind, 100)
			got, err := c.parse(body, maphash.Bytes(seed, body), kind, 100, nil)
			if (err == nil) != (wantErr == nil) || got != want {
				t.Fatalf("%q: cached %+v, %v; parseRequest %+v, %v", body, got, err, want, wantErr)
			}
		}
		// Two bodies in one slot: each is its own, never the other's.
		ra, _ := parseRequest(a, kind, 100)
		if got, _ := c.parse(a, 1, kind, 100, nil); got != ra {
			t.Fatalf("a in slot 1: %+v, want %+v", got, ra)
		}
		rb, errB := parseRequest(b, kind, 100)
		if got, err := c.parse(b, 1, kind, 100, nil); got != rb || (err == nil) != (errB == nil) {
			t.Fatalf("b in a's slot: %+v, want %+v", got, rb)
		}
	})
}

// TestParsedBodiesHoldAtMostTheirBound: bodies of the largest size kept,
// each in a slot of its own, fill the cache up to maxParsedBytes and no
// further; a body past the bound still parses (uncached), and held is
// what the slots hold.
func TestParsedBodiesHoldAtMostTheirBound(t *testing.T) {
	c := &parsedBodies{}
	pad := strings.Repeat("x", maxParsedBody-64)
	n := 2 * maxParsedBytes / maxParsedBody
	if n > parsedSlots {
		n = parsedSlots
	}
	for i := range n {
		body := []byte(fmt.Sprintf(`{"messages":[{"role":"user","content":"%s %d"}],"max_tokens":7}`, pad, i))
		want, wantErr := parseRequest(body, kindChat, 100)
		got, err := c.parse(body, uint64(i), kindChat, 100, nil)
		if err != nil || wantErr != nil || got != want {
			t.Fatalf("body %d: %+v, %v; want %+v, %v", i, got, err, want, wantErr)
		}
	}
	sum, kept := 0, 0
	for _, ch := range c.chunks {
		if ch == nil {
			continue
		}
		for i := range ch {
			sum += cap(ch[i].body)
			if ch[i].body != nil {
				kept++
			}
		}
	}
	if c.held != sum || c.held > maxParsedBytes {
		t.Errorf("held %d, the slots' bodies %d, bound %d", c.held, sum, maxParsedBytes)
	}
	if kept == 0 || kept >= n {
		t.Errorf("kept %d of %d bodies of %d bytes: want some, not all", kept, n, maxParsedBody)
	}
}
