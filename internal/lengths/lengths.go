// Package lengths is a request's length in tokens as a distribution: a
// fixed N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, or
// file:PATH (one count a line, sampled). A draw is a pure function of a
// seed, a stream and the request's sequence number, so shards of a fleet
// and reruns agree on every request's size, and it costs a hash and a
// little arithmetic (no state, no lock): it may run on the send path.
//
// Every form is bounded as a fixed N is: from Min to Max tokens. A
// parameter past the bound is refused; a drawn value past it (a
// distribution's tail) is clipped to it, and the draw says so.
package lengths

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Bounds of every length, as of a fixed one: a million tokens is the
// largest context window offered today.
const (
	Min = 1
	Max = 1_000_000
)

// MaxFileBytes bounds a file:PATH list of counts (64 MiB: ten million
// counts and more).
const MaxFileBytes = 64 << 20

// MaxSigma bounds lognormal's SIGMA: at 4 the p99 is already 11,000
// times the median.
const MaxSigma = 4.0

// The forms of a distribution, by the word that opens its spec.
const (
	KindFixed     = "fixed"
	KindUniform   = "uniform"
	KindNormal    = "normal"
	KindLognormal = "lognormal"
	KindFile      = "file"
)

// Dist is a distribution of lengths. The zero Dist is not valid: make
// one with Parse or Fixed.
type Dist struct {
	kind   string
	a, b   float64 // fixed: a; uniform: a to b; normal: mean, sd; lognormal: median, sigma
	values []int32 // file: the counts, in file order
	spec   string  // as parsed, for display
}

// Fixed is the distribution that is always n (not checked: Parse checks
// a user's n).
func Fixed(n int) Dist {
	return Dist{kind: KindFixed, a: float64(n), spec: strconv.Itoa(n)}
}

// Kind is the form's word: KindFixed, KindUniform, ….
func (d Dist) Kind() string { return d.kind }

// Valid reports whether d was made by Parse or Fixed.
func (d Dist) Valid() bool { return d.kind != "" }

// String is the spec d was parsed from.
func (d Dist) String() string { return d.spec }

// IsFixed reports d's one value when it has only one.
func (d Dist) IsFixed() (int, bool) {
	if d.kind == KindFixed {
		return int(d.a), true
	}
	return 0, false
}

// z is the largest |z| a draw's uniform can reach: u lies in
// [2^-54, 1-2^-54], so |Φ⁻¹(u)| < 8.3.
const zMax = 8.5

// Largest is the largest value a draw can return: with Smallest, what a
// sender prepares for before the run.
func (d Dist) Largest() int {
	switch d.kind {
	case KindFixed:
		return int(d.a)
	case KindUniform:
		return int(d.b)
	case KindNormal:
		return clip(d.a + zMax*d.b)
	case KindLognormal:
		return clip(d.a * math.Exp(zMax*d.b))
	case KindFile:
		m := int32(Min)
		for _, v := range d.values {
			m = max(m, v)
		}
		return int(m)
	}
	return Max
}

// Smallest is the smallest value a draw can return.
func (d Dist) Smallest() int {
	switch d.kind {
	case KindFixed:
		return int(d.a)
	case KindUniform:
		return int(d.a)
	case KindNormal:
		return clip(d.a - zMax*d.b)
	case KindLognormal:
		return clip(d.a * math.Exp(-zMax*d.b))
	case KindFile:
		m := int32(Max)
		for _, v := range d.values {
			m = min(m, v)
		}
		return int(m)
	}
	return Min
}

func clip(x float64) int {
	switch {
	case !(x >= Min): // NaN too
		return Min
	case x > Max:
		return Max
	}
	return int(math.Round(x))
}

// Streams keep a request's draws apart: its prompt and its output cap
// are independent even with one seed.
const (
	StreamPrompt    uint64 = 0x70726f6d7074 // "prompt"
	StreamMaxTokens uint64 = 0x6d6178746f6b // "maxtok"
	StreamPrompts   uint64 = 0x6c696e6573   // "lines": a prompts file's random order
)

// At is request seq's length under seed and stream, and whether it was
// clipped to the bounds (a tail past Min or Max).
func (d Dist) At(seed, stream uint64, seq int) (n int, clipped bool) {
	if d.kind == KindFixed {
		return int(d.a), false
	}
	u := Uniform(seed, stream, seq)
	var x float64
	switch d.kind {
	case KindUniform:
		x = math.Floor(d.a + u*(d.b-d.a+1))
		x = min(x, d.b) // u < 1, but the product may round up
	case KindNormal:
		x = d.a + d.b*normalQuantile(u)
	case KindLognormal:
		x = d.a * math.Exp(d.b*normalQuantile(u))
	case KindFile:
		return int(d.values[int(u*float64(len(d.values)))%len(d.values)]), false
	default:
		return Min, true
	}
	r := math.Round(x)
	return clip(x), !(r >= Min && r <= Max)
}

// Uniform is a uniform draw in (0, 1), a pure function of its arguments
// (splitmix64 of their mix).
func Uniform(seed, stream uint64, seq int) float64 {
	x := seed ^ stream*0x9e3779b97f4a7c15 ^ uint64(seq)*0xbf58476d1ce4e5b9
	x = splitmix(splitmix(x))
	return (float64(x>>11) + 0.5) / (1 << 53)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// normalQuantile is Φ⁻¹(u) for u in (0, 1).
func normalQuantile(u float64) float64 { return math.Sqrt2 * math.Erfinv(2*u-1) }

// Parse reads a spec: N, uniform:A-B, normal:MEAN,SD,
// lognormal:MEDIAN,SIGMA or file:PATH. read reads a file:PATH (nil: the
// form is refused); it should bound what it reads (MaxFileBytes). An
// error says what is wrong in one line, never quoting a file's lines.
func Parse(spec string, read func(path string) ([]byte, error)) (Dist, error) {
	s := strings.TrimSpace(spec)
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		n, err := count(s)
		if err != nil {
			return Dist{}, err
		}
		return Fixed(n), nil
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	rest = strings.TrimSpace(rest)
	switch kind {
	case KindUniform:
		return parseUniform(rest)
	case KindNormal, KindLognormal:
		return parseTwo(kind, rest)
	case KindFile:
		if read == nil {
			return Dist{}, errors.New("file: is not accepted here")
		}
		return parseFile(rest, read)
	}
	return Dist{}, fmt.Errorf("%q is not a length: want N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or file:PATH", short(s))
}

// short is s cut to 40 bytes for an error (a spec, never a prompt).
func short(s string) string {
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "…"
	}
	// An error is one line: a control character (a newline) is shown as ?.
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// count is a fixed length: an integer from Min to Max.
func count(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number of tokens: want N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or file:PATH", short(s))
	}
	if n < Min || n > Max {
		return 0, fmt.Errorf("%d tokens is out of range: must be from %d to %d", n, Min, Max)
	}
	return int(n), nil
}

func parseUniform(rest string) (Dist, error) {
	as, bs, ok := strings.Cut(rest, "-")
	if !ok {
		return Dist{}, fmt.Errorf("uniform:%s: want uniform:A-B, such as uniform:50-150", short(rest))
	}
	a, err := count(as)
	if err != nil {
		return Dist{}, fmt.Errorf("uniform: %w", err)
	}
	b, err := count(bs)
	if err != nil {
		return Dist{}, fmt.Errorf("uniform: %w", err)
	}
	if a > b {
		return Dist{}, fmt.Errorf("uniform:%d-%d: A must not exceed B", a, b)
	}
	return Dist{kind: KindUniform, a: float64(a), b: float64(b), spec: fmt.Sprintf("uniform:%d-%d", a, b)}, nil
}

// parseTwo reads normal:MEAN,SD and lognormal:MEDIAN,SIGMA.
func parseTwo(kind, rest string) (Dist, error) {
	first, second := "MEAN,SD", "SD"
	if kind == KindLognormal {
		first, second = "MEDIAN,SIGMA", "SIGMA"
	}
	xs, ys, ok := strings.Cut(rest, ",")
	if !ok {
		return Dist{}, fmt.Errorf("%s:%s: want %s:%s", kind, short(rest), kind, first)
	}
	x, err1 := strconv.ParseFloat(strings.TrimSpace(xs), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(ys), 64)
	if err1 != nil || err2 != nil || math.IsNaN(x) || math.IsNaN(y) {
		return Dist{}, fmt.Errorf("%s:%s: want two numbers, %s:%s", kind, short(rest), kind, first)
	}
	if !(x >= Min && x <= Max) {
		return Dist{}, fmt.Errorf("%s: the %s, %g tokens, is out of range: must be from %d to %d", kind, strings.ToLower(strings.Split(first, ",")[0]), x, Min, Max)
	}
	limit := float64(Max)
	if kind == KindLognormal {
		limit = MaxSigma
	}
	if !(y >= 0 && y <= limit) {
		return Dist{}, fmt.Errorf("%s: %s %g is out of range: must be from 0 to %g", kind, second, y, limit)
	}
	return Dist{kind: kind, a: x, b: y, spec: kind + ":" + strconv.FormatFloat(x, 'g', -1, 64) + "," + strconv.FormatFloat(y, 'g', -1, 64)}, nil
}

// parseFile reads one count a line; blank lines and lines that start
// with # are skipped.
func parseFile(path string, read func(string) ([]byte, error)) (Dist, error) {
	if path == "" {
		return Dist{}, errors.New("file: needs a path, file:PATH")
	}
	data, err := read(path)
	if err != nil {
		return Dist{}, fmt.Errorf("file:%s: %w", short(path), err)
	}
	if len(data) > MaxFileBytes {
		return Dist{}, fmt.Errorf("file:%s: over %d MiB", short(path), MaxFileBytes>>20)
	}
	values, err := readCounts(data)
	if err != nil {
		return Dist{}, fmt.Errorf("file:%s: %w", short(path), err)
	}
	return Dist{kind: KindFile, values: values, spec: "file:" + path}, nil
}

// readCounts is the counts of data, one a line.
func readCounts(data []byte) ([]int32, error) {
	var values []int32
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 256), 4096)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d is not a whole number of tokens", line)
		}
		if n < Min || n > Max {
			return nil, fmt.Errorf("line %d: %d tokens is out of range: must be from %d to %d", line, n, Min, Max)
		}
		values = append(values, int32(n))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("a line is over 4 KiB: one count a line")
	}
	if len(values) == 0 {
		return nil, errors.New("holds no count: one a line")
	}
	return values, nil
}
