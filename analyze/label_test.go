package analyze

import (
	"strings"
	"testing"
)

func TestValidateLabel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		label string
		ok    bool
	}{
		{"Burst-shaped source", true},
		{"Région é — 東京", true},
		{strings.Repeat("x", MaxLabelLen), true},
		{strings.Repeat("x", MaxLabelLen+1), false},
		{"a,b", false},
		{"a\nb", false},
		{"a\tb", false},
		{"", false},
		{"   ", false},
		{"bad\xffutf8", false},
		{"bell\a", false},
	}
	for _, c := range cases {
		if err := ValidateLabel(c.label); (err == nil) != c.ok {
			t.Errorf("ValidateLabel(%q) = %v, want ok=%v", c.label, err, c.ok)
		}
	}
}

func TestParseLabels(t *testing.T) {
	t.Parallel()
	l, err := ParseLabels([]string{"task013=Burst-shaped source", "a=b=c"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"task013":          "Burst-shaped source",
		"a":                "b=c",
		"burst-shaped":     "Burst-shaped source",
		"scheduled-shaped": "Scheduled-shaped source",
		"other":            "other",
	}
	for raw, want := range cases {
		if got := l.Published(raw); got != want {
			t.Errorf("Published(%q) = %q, want %q", raw, got, want)
		}
	}
	for _, bad := range []string{"noequals", "=x", "x=", "x=a,b", "x=" + strings.Repeat("y", 65)} {
		if _, err := ParseLabels([]string{bad}); err == nil {
			t.Errorf("ParseLabels(%q) accepted", bad)
		}
	}
}

func TestParseColumns(t *testing.T) {
	t.Parallel()
	cols, err := ParseColumns([]string{"mean", "P10_ms", " min ", "p50", "count"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "p50_ms,p90_ms,p99_ms,max_ms,min_ms,p10_ms,mean_ms"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	if _, err := ParseColumns([]string{"p42"}); err == nil || !strings.Contains(err.Error(), "p999") {
		t.Errorf("unknown column: %v", err)
	}
}
