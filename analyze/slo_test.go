package analyze

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

func TestParseSLO(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want SLO
	}{
		{"", SLO{}},
		{"10s", SLO{E2E: 10 * time.Second}},
		{" 1.5s ", SLO{E2E: 1500 * time.Millisecond}},
		{"ttft=500ms", SLO{TTFT: 500 * time.Millisecond}},
		{"ttft=500ms,tpot=50ms,itl=200ms,e2e=10s", SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, ITL: 200 * time.Millisecond, E2E: 10 * time.Second}},
		{"E2E=2s, TTFT=1s", SLO{TTFT: time.Second, E2E: 2 * time.Second}},
		{"e2el=3s", SLO{E2E: 3 * time.Second}},
	}
	for _, c := range good {
		got, err := ParseSLO(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if back, err := ParseSLO(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", c.in, got.String(), back, err)
		}
	}
	for _, in := range []string{"fast", "ttft", "ttft=", "ttft=-1s", "ttft=0s", "ttft=2h", "ttfb=1s", "ttft=1s,ttft=2s", "1s,2s", "ttft=1s,", strings.Repeat("e", 300)} {
		if s, err := ParseSLO(in); err == nil {
			t.Errorf("ParseSLO(%q) = %+v, want an error", in, s)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSLO(%q): error of several lines: %q", in, err)
		}
	}
}

// TestSLOMet: each term holds on its column; an answer without a ttft_ms
// misses a token term, one without tpot or itl meets those terms.
func TestSLOMet(t *testing.T) {
	t.Parallel()
	rec := results.Blank()
	rec.Status, rec.LatencyMS = 200, 900
	e2e := SLO{E2E: time.Second}
	if !e2e.Met(&rec) {
		t.Error("latency 900 ms misses e2e=1s")
	}
	rec.LatencyMS = 1000.5
	if e2e.Met(&rec) {
		t.Error("latency 1000.5 ms meets e2e=1s")
	}
	tok := SLO{TTFT: 100 * time.Millisecond, TPOT: 20 * time.Millisecond, ITL: 50 * time.Millisecond}
	if tok.Met(&rec) {
		t.Error("an answer not streamed meets a ttft term")
	}
	rec.TTFTMS = 100
	if !tok.Met(&rec) {
		t.Error("ttft 100 ms, no tpot or itl (one token): misses")
	}
	rec.TPOTMS, rec.ITLMaxMS = 20, 50
	if !tok.Met(&rec) {
		t.Error("every term at its bound: misses")
	}
	for _, f := range []func(){func() { rec.TTFTMS = 100.001 }, func() { rec.TPOTMS = 20.5 }, func() { rec.ITLMaxMS = 51 }} {
		r := rec
		f()
		if tok.Met(&rec) {
			t.Errorf("%+v meets %v", rec, tok)
		}
		rec = r
	}
	if !tok.NeedsStream() || e2e.NeedsStream() {
		t.Error("NeedsStream")
	}
	if _, err := tok.OnlyE2E(); err == nil {
		t.Error("OnlyE2E of a token SLO: no error")
	}
	if d, err := e2e.OnlyE2E(); err != nil || d != time.Second {
		t.Errorf("OnlyE2E = %v, %v", d, err)
	}
}

// FuzzParseSLO: any input is parsed or refused with one line, never a
// panic; what parses writes back as itself.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"10s", "ttft=500ms,tpot=50ms", "e2e=1h", "itl=1ns", "ttft=1s,,e2e=2s", "=", "ttft==1s", "1e3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSLO(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of several lines", in)
			}
			return
		}
		for _, d := range []time.Duration{s.TTFT, s.TPOT, s.ITL, s.E2E} {
			if d < 0 || d > MaxSLO {
				t.Fatalf("%q: term %v out of range", in, d)
			}
		}
		back, err := ParseSLO(s.String())
		if err != nil || back != s {
			t.Fatalf("%q: %+v writes as %q, reads back as %+v, %v", in, s, s.String(), back, err)
		}
	})
}

// TestOldFileHasNoTokens: a results file written before the token columns
// reads as answers not streamed, on the blocks' fast path as on the
// sequential one: no ttft, and an SLO on ttft is refused for it.
func TestOldFileHasNoTokens(t *testing.T) {
	t.Parallel()
	cols := results.Columns[:slices.Index(results.Columns, "ttft_ms")]
	var b strings.Builder
	b.WriteString(strings.Join(cols, ",") + "\n")
	for i := range 3000 { // several blocks
		b.WriteString("5eed1234,scheduled,g," + strconv.Itoa(i) + ",1,,5,6,7,80,200,,,,,none,0,,,,1000,,20,100,,,0,azure,,,,,\n")
	}
	for _, read := range []func(*Tally, io.Reader) error{
		func(tl *Tally, r io.Reader) error { return tl.readSequential(r, Input{Name: "old.csv", Ordinal: 1}) },
		func(tl *Tally, r io.Reader) error {
			return tl.Read(context.Background(), r, Input{Name: "old.csv", Ordinal: 1}, ForeignColumns{})
		},
	} {
		tl := NewTally(false, WithSLO(SLO{TTFT: time.Second}))
		if err := read(tl, strings.NewReader(b.String())); err != nil {
			t.Fatal(err)
		}
		a, err := tl.Analysis(nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := &a.Overall.Requests
		if r.Succeeded != 3000 || r.Streamed != 0 || r.TTFTs() != 0 || r.SLOMet != 0 || a.CheckSLO() == nil {
			t.Errorf("succeeded %d, streamed %d, ttfts %d, met %d, check %v", r.Succeeded, r.Streamed, r.TTFTs(), r.SLOMet, a.CheckSLO())
		}
	}
}
