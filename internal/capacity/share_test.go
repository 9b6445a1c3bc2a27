package capacity

import (
	"math"
	"strings"
	"testing"
)

func TestParseShare(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"95%": 0.95, "95": 0.95, " 5 % ": 0.05, "0%": 0, "100": 1, "99.5%": 0.995} {
		if got, err := ParseShare(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseShare(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"", "%", "101%", "-1%", "NaN", "Inf%", "0x10", "95%%", "95 percent", strings.Repeat("9", 40)} {
		if got, err := ParseShare(in); err == nil {
			t.Errorf("ParseShare(%q) = %g; want an error", in, got)
		}
	}
}

func FuzzParseShare(f *testing.F) {
	for _, s := range []string{"95%", "5", "0%", "100%", "1e2", "-0", "NaN%", "+50%", " 7.5 %"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseShare(s)
		if err != nil {
			if strings.Contains(err.Error(), s) && s != "" && len(s) > 3 {
				t.Errorf("the error quotes the input: %v", err)
			}
			return
		}
		if !(v >= 0 && v <= 1) {
			t.Fatalf("ParseShare(%q) = %g: out of [0, 1]", s, v)
		}
		again, err := ParseShare(FormatShare(v))
		if err != nil || math.Abs(again-v) > 1e-12 {
			t.Fatalf("ParseShare(%q) = %g, its format %q reads %g, %v", s, v, FormatShare(v), again, err)
		}
	})
}
