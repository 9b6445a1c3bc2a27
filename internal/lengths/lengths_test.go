package lengths

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

func TestParseForms(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "counts.txt")
	os.WriteFile(path, []byte("# lengths\n120\n\n300\n 45 \n"), 0o644)
	cases := []struct {
		spec, kind, str string
		smallest, large int
	}{
		{"500", KindFixed, "500", 500, 500},
		{" 1 ", KindFixed, "1", 1, 1},
		{"1000000", KindFixed, "1000000", Max, Max},
		{"uniform:50-150", KindUniform, "uniform:50-150", 50, 150},
		{"Uniform: 7 - 7", KindUniform, "uniform:7-7", 7, 7},
		{"normal:800,100", KindNormal, "normal:800,100", 1, 1650},
		{"lognormal:800,0.5", KindLognormal, "lognormal:800,0.5", 11, 56084},
		{"file:" + path, KindFile, "file:" + path, 45, 300},
	}
	for _, c := range cases {
		d, err := Parse(c.spec, readFile)
		if err != nil {
			t.Errorf("%q: %v", c.spec, err)
			continue
		}
		if d.Kind() != c.kind || d.String() != c.str || d.Smallest() != c.smallest || d.Largest() != c.large {
			t.Errorf("%q: kind %s, %q, from %d to %d; want %s, %q, %d to %d", c.spec, d.Kind(), d.String(), d.Smallest(), d.Largest(), c.kind, c.str, c.smallest, c.large)
		}
	}
}

// Every form is bounded as N is: past the bound, one line.
func TestParseRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("12\nsecret words here\n"), 0o644)
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte("12\n1000001\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# none\n\n"), 0o644)
	for _, spec := range []string{
		"", "0", "-5", "1000001", "1e3", "12.5", "uniform:0-10", "uniform:10-1000001", "uniform:20-10", "uniform:10",
		"normal:0,10", "normal:800,-1", "normal:800", "normal:x,1", "normal:NaN,1", "normal:800,1e7",
		"lognormal:800,5", "lognormal:2000000,0.5", "lognormal:800,NaN", "gamma:2,3",
		"file:", "file:" + filepath.Join(dir, "missing"), "file:" + bad, "file:" + big, "file:" + empty,
	} {
		_, err := Parse(spec, readFile)
		if err == nil {
			t.Errorf("%q: accepted", spec)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "secret") {
			t.Errorf("%q: error %q is not one line without the file's text", spec, msg)
		}
	}
	if _, err := Parse("file:x", nil); err == nil {
		t.Error("file: accepted without a reader")
	}
	if _, err := Parse("file:x", func(string) ([]byte, error) { return nil, errors.New("no") }); err == nil {
		t.Error("an unreadable file accepted")
	}
}

func draws(t *testing.T, spec string, n int) (vals []int, clipped int) {
	t.Helper()
	d, err := Parse(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for seq := range n {
		v, c := d.At(42, StreamPrompt, seq)
		if v < Min || v > Max {
			t.Fatalf("%s seq %d: %d out of bounds", spec, seq, v)
		}
		if c {
			clipped++
		}
		vals = append(vals, v)
	}
	return vals, clipped
}

func TestDrawsFollowTheirDistribution(t *testing.T) {
	vals, _ := draws(t, "lognormal:800,0.5", 4000)
	slices.Sort(vals)
	if med := vals[len(vals)/2]; med < 760 || med > 840 {
		t.Errorf("lognormal:800,0.5 median %d, want 800 ± 5%%", med)
	}
	// p84 of a lognormal is median·e^σ.
	if p84 := vals[len(vals)*841/1000]; math.Abs(float64(p84)/(800*math.Exp(0.5))-1) > 0.06 {
		t.Errorf("lognormal:800,0.5 p84 %d, want %.0f", p84, 800*math.Exp(0.5))
	}
	vals, _ = draws(t, "uniform:50-150", 3000)
	seen := map[int]bool{}
	for _, v := range vals {
		if v < 50 || v > 150 {
			t.Fatalf("uniform:50-150 drew %d", v)
		}
		seen[v] = true
	}
	if len(seen) != 101 {
		t.Errorf("uniform:50-150 drew %d distinct values, want all 101", len(seen))
	}
	vals, _ = draws(t, "normal:1000,200", 4000)
	mean := 0.0
	for _, v := range vals {
		mean += float64(v)
	}
	if mean /= float64(len(vals)); math.Abs(mean-1000) > 15 {
		t.Errorf("normal:1000,200 mean %.1f, want 1000 ± 15", mean)
	}
}

func TestTailsClippedAndCounted(t *testing.T) {
	vals, clipped := draws(t, "normal:10,20", 2000)
	// P(X < 0.5) for N(10, 20) is 0.317.
	if f := float64(clipped) / 2000; f < 0.27 || f > 0.36 {
		t.Errorf("normal:10,20 clipped %.3f of draws, want about 0.317", f)
	}
	if slices.Min(vals) != Min {
		t.Errorf("clipped draws are %d, want %d", slices.Min(vals), Min)
	}
	_, clipped = draws(t, "lognormal:999000,0.5", 500)
	if clipped < 200 {
		t.Errorf("lognormal:999000,0.5 clipped %d of 500 at the top, want about half", clipped)
	}
	if _, clipped = draws(t, "uniform:1-1000000", 500); clipped != 0 {
		t.Errorf("a uniform within bounds clipped %d", clipped)
	}
}

// A draw is a function of seed, stream and seq: shards and reruns agree;
// another seed or stream draws otherwise.
func TestDrawsDeterministic(t *testing.T) {
	d, _ := Parse("lognormal:800,0.5", nil)
	same, otherSeed, otherStream := 0, 0, 0
	for seq := range 200 {
		a, _ := d.At(7, StreamPrompt, seq)
		b, _ := d.At(7, StreamPrompt, seq)
		c, _ := d.At(8, StreamPrompt, seq)
		e, _ := d.At(7, StreamMaxTokens, seq)
		if a == b {
			same++
		}
		if a == c {
			otherSeed++
		}
		if a == e {
			otherStream++
		}
	}
	if same != 200 || otherSeed > 10 || otherStream > 10 {
		t.Errorf("same %d/200, equal under another seed %d, another stream %d", same, otherSeed, otherStream)
	}
}

func TestFileDrawsItsValues(t *testing.T) {
	d, err := Parse("file:x", func(string) ([]byte, error) { return []byte("10\n20\n30\n"), nil })
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for seq := range 600 {
		v, c := d.At(1, StreamPrompt, seq)
		if c {
			t.Fatal("a file's count clipped")
		}
		seen[v]++
	}
	if len(seen) != 3 || seen[10] < 150 || seen[20] < 150 || seen[30] < 150 {
		t.Errorf("file draws %v, want 10, 20 and 30 about equally", seen)
	}
}

// FuzzParse: any spec parses or is refused in one line, never panics;
// what parses draws within the bounds, between Smallest and Largest, and
// its String parses to the same distribution.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"500", "uniform:50-150", "normal:800,100", "lognormal:800,0.5", "file:x", "uniform:-", "normal:1e308,1e308", "lognormal:1,4"} {
		f.Add(s, "10\n20\n# c\n\n30\n")
	}
	f.Fuzz(func(t *testing.T, spec, file string) {
		d, err := Parse(spec, func(string) ([]byte, error) { return []byte(file), nil })
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error over one line: %q", spec, err)
			}
			return
		}
		lo, hi := d.Smallest(), d.Largest()
		if lo < Min || hi > Max || lo > hi {
			t.Fatalf("%q: range %d to %d", spec, lo, hi)
		}
		for seq := range 20 {
			v, _ := d.At(3, StreamPrompt, seq)
			if v < lo || v > hi {
				t.Fatalf("%q seq %d: %d outside %d to %d", spec, seq, v, lo, hi)
			}
		}
		if d.Kind() == KindFile {
			return
		}
		again, err := Parse(d.String(), nil)
		if err != nil || again.String() != d.String() {
			t.Fatalf("%q: String %q parses to %q, %v", spec, d.String(), again.String(), err)
		}
	})
}
