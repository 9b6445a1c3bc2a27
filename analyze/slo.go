package analyze

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// SLO is a service-level objective a request must meet to count in the
// goodput: any subset of a time to first token, a time per output token,
// an inter-token latency and an end-to-end latency, in vLLM's --goodput
// vocabulary. A zero field is not named. One grammar serves every command
// that takes --slo (burst, schedule, characterize, analyze, policies):
//
//	--slo ttft=500ms,tpot=50ms    two terms: both must hold
//	--slo 10s                     a bare duration is e2e=10s
//
// Each term is measured on the request's final attempt, from that
// attempt's send, as the results columns are (docs/results.md):
//
//   - ttft: ttft_ms, the first content token, within it (a request whose
//     answer carries no ttft_ms — not streamed — misses it);
//   - tpot: tpot_ms within it (an answer of one output token, which has
//     none, meets it);
//   - itl: itl_max_ms within it — every gap between the answer's content
//     events, not only the typical one (an answer with fewer than two
//     content events meets it);
//   - e2e: latency_ms within it.
//
// Goodput is the planned requests answered 2xx, without an error, within
// every named term; a request refused, failed, timed out or never sent
// counts against it (Goodput).
type SLO struct {
	TTFT, TPOT, ITL, E2E time.Duration
}

// MaxSLO bounds each term of an SLO.
const MaxSLO = time.Hour

// sloTerms are the names of the terms, in the order String writes them.
var sloTerms = []string{"ttft", "tpot", "itl", "e2e"}

func (s *SLO) term(name string) *time.Duration {
	switch name {
	case "ttft":
		return &s.TTFT
	case "tpot":
		return &s.TPOT
	case "itl":
		return &s.ITL
	case "e2e":
		return &s.E2E
	}
	return nil
}

// ParseSLO parses "ttft=DUR,tpot=DUR,itl=DUR,e2e=DUR" (any subset, in any
// order, each at most once; DUR a Go duration such as 500ms or 1.5s,
// positive and at most MaxSLO) or a bare duration, which means e2e=DUR.
// The empty string is the zero SLO (none named).
func ParseSLO(v string) (SLO, error) {
	var s SLO
	v = strings.TrimSpace(v)
	if v == "" {
		return s, nil
	}
	if len(v) > 200 {
		return s, errors.New("longer than 200 characters; want ttft=DUR,tpot=DUR,itl=DUR,e2e=DUR")
	}
	if !strings.Contains(v, "=") && !strings.Contains(v, ",") {
		d, err := sloDuration("e2e", v)
		s.E2E = d
		return s, err
	}
	for _, part := range strings.Split(v, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "e2el" { // vLLM's spelling
			name = "e2e"
		}
		if !ok {
			return SLO{}, fmt.Errorf("%q is not NAME=DURATION (names: %s; a bare duration alone means e2e)", clip(part, 32), strings.Join(sloTerms, ", "))
		}
		p := s.term(name)
		if p == nil {
			return SLO{}, fmt.Errorf("unknown term %q (names: %s)", clip(name, 16), strings.Join(sloTerms, ", "))
		}
		if *p != 0 {
			return SLO{}, fmt.Errorf("%s given twice", name)
		}
		d, err := sloDuration(name, value)
		if err != nil {
			return SLO{}, err
		}
		*p = d
	}
	return s, nil
}

func sloDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %q is not a duration such as 500ms or 2s", name, clip(strings.TrimSpace(v), 32))
	case d <= 0 || d > MaxSLO:
		return 0, fmt.Errorf("%s: %v is out of range: want more than 0 and at most %v", name, d, MaxSLO)
	}
	return d, nil
}

// String writes s in the grammar ParseSLO reads: "e2e=10s", "ttft=500ms,tpot=50ms";
// "" for the zero SLO.
func (s SLO) String() string {
	var parts []string
	for _, name := range sloTerms {
		if d := *s.term(name); d != 0 {
			parts = append(parts, name+"="+d.String())
		}
	}
	return strings.Join(parts, ",")
}

// Set parses v into s (a command-line flag's value).
func (s *SLO) Set(v string) error {
	p, err := ParseSLO(v)
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// Type names the flag's value in a help text.
func (*SLO) Type() string { return "slo" }

// IsZero reports whether no term is named.
func (s SLO) IsZero() bool { return s == SLO{} }

// NeedsStream reports whether a term needs a streamed answer to be
// measured: ttft, tpot or itl.
func (s SLO) NeedsStream() bool { return s.TTFT != 0 || s.TPOT != 0 || s.ITL != 0 }

// OnlyE2E returns the e2e term of an SLO that names no other, for a
// measure that knows only a request's latency (the policy lab); an error
// naming the terms it cannot measure otherwise.
func (s SLO) OnlyE2E() (time.Duration, error) {
	if s.NeedsStream() {
		return 0, errors.New("ttft, tpot and itl need token timing, which this measure does not have: give e2e=DUR or a bare duration")
	}
	return s.E2E, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Met reports whether rec, an attempt answered 2xx without an error,
// meets every named term (see SLO). It does not look at the status.
func (s SLO) Met(rec *results.Record) bool {
	if s.E2E != 0 && (rec.LatencyMS < 0 || rec.LatencyMS > ms(s.E2E)) {
		return false
	}
	if !s.NeedsStream() {
		return true
	}
	if rec.TTFTMS < 0 || (s.TTFT != 0 && rec.TTFTMS > ms(s.TTFT)) {
		return false
	}
	if s.TPOT != 0 && rec.TPOTMS >= 0 && rec.TPOTMS > ms(s.TPOT) {
		return false
	}
	if s.ITL != 0 && rec.ITLMaxMS >= 0 && rec.ITLMaxMS > ms(s.ITL) {
		return false
	}
	return true
}

// WithSLO makes a Tally count, for each group, the requests that meet
// slo: its Analysis then publishes their goodput (Analysis.Goodput).
func WithSLO(slo SLO) TallyOption {
	return func(t *Tally) { t.slo = slo }
}

// Goodput is the goodput of one group (or Overall) under the Analysis's
// SLO: the planned requests, how many of them met it (answered 2xx within
// every term), their share and their rate over the group's span.
type Goodput struct {
	Group    string  `json:"group"`
	Planned  int     `json:"planned"`
	Met      int     `json:"met"`
	SharePct float64 `json:"share_pct"`
	// PerS is Met over the group's span of sends (Requests.SpanS); 0 when
	// there is no span.
	PerS float64 `json:"per_s"`
}

// goodputOf is g's goodput.
func goodputOf(g *Group) Goodput {
	r := &g.Requests
	met := min(r.SLOMet, r.Planned) // a file cut before its first attempts: never above the planned
	out := Goodput{Group: g.Label, Planned: r.Planned, Met: met}
	if r.Planned > 0 {
		out.SharePct = 100 * float64(met) / float64(r.Planned)
	}
	if s, ok := r.SpanS(); ok {
		out.PerS = float64(met) / s
	}
	return out
}

// Goodput returns the goodput of Overall, then of each group, under the
// SLO the Tally was given (WithSLO); nil without one, or without ptuprobe
// requests.
func (a *Analysis) Goodput() []Goodput {
	if a.SLO.IsZero() || !a.HasRequests() {
		return nil
	}
	out := []Goodput{goodputOf(&a.Overall)}
	for i := range a.Groups {
		out = append(out, goodputOf(&a.Groups[i]))
	}
	return out
}

// ErrNoStream is returned (in a BadInputError) when an SLO names ttft,
// tpot or itl and the input holds no streamed answer to measure them on.
var ErrNoStream = errors.New("--slo names ttft, tpot or itl, but the input holds no streamed answer (no ttft_ms): they cannot be measured; record with --stream, or give only e2e")

// CheckSLO returns a BadInputError when a's SLO needs a stream and a
// holds ptuprobe requests of which none was streamed.
func (a *Analysis) CheckSLO() error {
	if a.SLO.NeedsStream() && a.Overall.Requests.Streamed == 0 {
		return &BadInputError{Setting: "SLO", Err: ErrNoStream}
	}
	return nil
}
