package analyze

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestForeignValueUnit: a value column in seconds is read as seconds with
// Unit s, and as ms with a warning naming it without a unit; with Unit ms
// given, as ms without one.
func TestForeignValueUnit(t *testing.T) {
	t.Parallel()
	path := "testdata/foreign/seconds.csv"
	cases := []struct {
		unit    string
		max     float64
		warning bool
	}{{UnitS, 10000, false}, {"", 10, true}, {UnitMS, 10, false}}
	for _, c := range cases {
		a, err := analyzeFiles(t, ForeignColumns{Value: "retry_after_s", Unit: c.unit}, nil, 1, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.GroupByLabel("a").Stats["max_ms"]; got != c.max {
			t.Errorf("unit %q: max %v ms, want %v", c.unit, got, c.max)
		}
		warned := len(a.ReadNotes) == 1 && strings.HasPrefix(a.ReadNotes[0], "warning: ") && strings.Contains(a.ReadNotes[0], `"retry_after_s"`)
		if warned != c.warning || (!c.warning && len(a.ReadNotes) > 0) {
			t.Errorf("unit %q: notes %q, want a warning naming the column: %v", c.unit, a.ReadNotes, c.warning)
		}
		if b := a.GroupByLabel("b"); b.NoWait.None != 1 || b.NoWait.Invalid != 1 {
			t.Errorf("unit %q: b %+v, want one empty and one invalid value", c.unit, b.NoWait)
		}
	}
	if _, err := ParseUnit("minutes"); err == nil {
		t.Error("ParseUnit(minutes) accepted")
	}
	if u, err := ParseUnit(" S "); err != nil || u != UnitS {
		t.Errorf("ParseUnit(S) = %q, %v", u, err)
	}
}

// TestForeignStatusColumn: only the rows whose status is 429 are events,
// with the column named status taken by default (and a note that says so)
// or the one named; a named column that is missing is refused.
func TestForeignStatusColumn(t *testing.T) {
	t.Parallel()
	path := "testdata/foreign/status.csv"
	for _, status := range []string{"", "status"} {
		a, err := analyzeFiles(t, ForeignColumns{Group: "group", Status: status}, nil, 1, path)
		if err != nil {
			t.Fatal(err)
		}
		x, y := a.GroupByLabel("x"), a.GroupByLabel("y")
		if x.Events != 3 || x.Count() != 3 || y.Events != 1 || a.OtherStatus != 4 {
			t.Errorf("status %q: x %d events, y %d, %d skipped; want 3, 1, 4", status, x.Events, y.Events, a.OtherStatus)
		}
		noted := len(a.ReadNotes) == 1 && strings.HasPrefix(a.ReadNotes[0], "note: ") && strings.Contains(a.ReadNotes[0], `column "status" read as the HTTP status`)
		if noted != (status == "") {
			t.Errorf("status %q: notes %q", status, a.ReadNotes)
		}
		if !strings.Contains(strings.Join(a.Warnings, "\n"), "4 foreign row(s) whose status is not 429 were skipped") {
			t.Errorf("status %q: warnings %q", status, a.Warnings)
		}
	}
	_, err := analyzeFiles(t, ForeignColumns{Group: "group", Status: "code"}, nil, 1, path)
	if bad := (*BadInputError)(nil); !asBadInput(err, &bad) || bad.Setting != "Status" || !strings.Contains(err.Error(), `no column "code"`) {
		t.Errorf("a missing status column: %v", err)
	}
}

// TestForeignRepeatedColumnNames: a column read (status, value, group)
// whose name another column has too is read from the first, with a
// warning that names them all.
func TestForeignRepeatedColumnNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, header string
		cols         ForeignColumns
		want         string // the warning; "" for none
	}{
		{"status by default", "status,group,status,retry_after_ms", ForeignColumns{Group: "group"},
			`warning: events.csv: 2 columns are named "status" (columns 1, 3): column 1 is read`},
		{"status named", "group,status,retry_after_ms, status ", ForeignColumns{Group: "group", Status: "status"},
			`warning: events.csv: 2 columns are named "status" (columns 2, 4): column 2 is read`},
		{"value", "retry_after_ms,group,status,retry_after_ms,retry_after_ms", ForeignColumns{Group: "group"},
			`warning: events.csv: 3 columns are named "retry_after_ms" (columns 1, 4, 5): column 1 is read`},
		{"group", "group,status,retry_after_ms,group", ForeignColumns{Group: "group"},
			`warning: events.csv: 2 columns are named "group" (columns 1, 4): column 1 is read`},
		{"none repeated", "group,status,retry_after_ms,other,other", ForeignColumns{Group: "group"}, ""},
	}
	for _, c := range cases {
		content := c.header + "\n"
		tally := NewTally(false)
		if err := tally.Read(context.Background(), strings.NewReader(content), Input{Name: "events.csv", Ordinal: 1}, c.cols); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var warnings []string
		for _, n := range tally.notes {
			if strings.HasPrefix(n, "warning: ") {
				warnings = append(warnings, n)
			}
		}
		if want := []string{c.want}; c.want == "" && len(warnings) > 0 || c.want != "" && !slices.Equal(warnings, want) {
			t.Errorf("%s: warnings %q, want %q", c.name, warnings, c.want)
		}
	}
}

func asBadInput(err error, bad **BadInputError) bool { return errors.As(err, bad) }
