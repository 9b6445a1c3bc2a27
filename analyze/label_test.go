package analyze

import (
	"strings"
	"testing"
)

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
	refused := []struct{ spec, err string }{
		{"noequals", "want FROM=TO"},
		{"=x", "want FROM=TO"},
		{"x=", "label must not be blank"},
		{"x=a,b", "label must fit one CSV cell: it contains a comma at character 2"},
		{"x=night\u00a0run", "label must be printable: character 6 is U+00A0"},
		{"x=" + strings.Repeat("y", 65), "label must be at most 64 characters"},
	}
	for _, c := range refused {
		if _, err := ParseLabels([]string{c.spec}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseLabels(%q) err = %v, want %q", c.spec, err, c.err)
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
