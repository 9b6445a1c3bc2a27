package results

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// readLine reads one row written under the full header.
func readLine(t *testing.T, line []byte) Record {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(append([]byte(header+"\n"), line...)), "row.csv")
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := rd.Read(&rec); err != nil {
		t.Fatalf("read %q: %v", line, err)
	}
	return rec
}

// TestEveryColumnRoundTrips guards the one table: each column must set
// exactly one Record field of its own, every field must have a column, and
// what a column decodes must come back through the writer and the reader
// unchanged. A column added to the table with a decode that sets nothing,
// or an append that writes another field, fails here.
func TestEveryColumnRoundTrips(t *testing.T) {
	t.Parallel()
	blank := Blank()
	if n := reflect.TypeFor[Record]().NumField(); n != len(table) {
		t.Fatalf("Record has %d fields, the column table %d: a field without a column, or the reverse", n, len(table))
	}
	owner := map[string]string{} // Record field → column
	for _, c := range table {
		t.Run(c.name, func(t *testing.T) {
			// The first cell that changes the field: "12.345" suits text
			// and numbers, "1" integers and flags.
			var rec Record
			cell := ""
			for _, try := range []string{"12.345", "1"} {
				rec = Blank()
				if err := c.decode(&rec, try); err == nil && rec != blank {
					cell = try
					break
				}
			}
			if cell == "" {
				t.Fatalf("no cell changes a Record: decode sets no field")
			}
			changed := changedFields(blank, rec)
			if len(changed) != 1 {
				t.Fatalf("decoding %q changed fields %v, want exactly one", cell, changed)
			}
			if prev, ok := owner[changed[0]]; ok {
				t.Fatalf("field %s is decoded by columns %s and %s", changed[0], prev, c.name)
			}
			owner[changed[0]] = c.name
			if got := string(c.append(nil, &rec)); got != cell {
				t.Errorf("append wrote %q, decode read %q", got, cell)
			}
			if got := readLine(t, appendCSV(nil, &rec)); got != rec {
				t.Errorf("row round trip:\n got %+v\nwant %+v", got, rec)
			}
		})
	}
}

func changedFields(a, b Record) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		if !va.Field(i).Equal(vb.Field(i)) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}

func TestColumns(t *testing.T) {
	t.Parallel()
	if got := strings.Join(Columns, ","); got != header {
		t.Fatalf("Columns %q and the header %q differ", got, header)
	}
	// The required prefix ends at spillover in every version of the file.
	if Columns[requiredColumns-1] != "spillover" {
		t.Errorf("required prefix ends at %q", Columns[requiredColumns-1])
	}
	seen := map[string]bool{}
	for _, c := range Columns {
		if seen[c] {
			t.Errorf("column %q twice", c)
		}
		seen[c] = true
	}
}

// TestDocsDescribeEveryColumn keeps docs/results.md in step with the table.
func TestDocsDescribeEveryColumn(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Columns {
		if !bytes.Contains(doc, []byte("| `"+c+"` |")) {
			t.Errorf("docs/results.md has no row for column %s", c)
		}
	}
}

func TestFormatMS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    float64
		want string
	}{
		{None, ""},
		{0, "0"},
		{43, "43"},
		{40.125, "40.125"},
		{0.0004, "0"},
		{1.0005, "1.001"},
		{16921.1249, "16921.125"},
		// int64(v*1000+0.5) overflowed here and wrote -9223372036854776.
		{1e16, "10000000000000000"},
	}
	for _, c := range cases {
		if got := FormatMS(c.v); got != c.want {
			t.Errorf("FormatMS(%v) = %q, want %q", c.v, got, c.want)
		}
		r := Blank()
		r.WaitMS = c.v
		if line := string(appendCSV(nil, &r)); !strings.Contains(line, ","+c.want+",") {
			t.Errorf("appendCSV with wait_ms %v = %q, want the cell %q", c.v, line, c.want)
		}
	}
}

func TestReaderLineCap(t *testing.T) {
	t.Parallel()
	r := sample(0)
	row := string(appendCSV(nil, &r))
	long := strings.Repeat("x", 3*MaxLine) // a few MB, no newline
	cases := []struct {
		name     string
		in       string
		rows     int // read before the error
		wantLine string
	}{
		{"row after the header", header + "\n" + row + long + "\n" + row, 1, "long.csv line 3"},
		{"last line without newline", header + "\n" + long, 0, "long.csv line 2"},
		// Padding the run_id makes a row of exactly MaxLine bytes.
		{"a row of MaxLine bytes", header + "\n" + strings.Repeat(" ", MaxLine-len(row)) + row, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rd, err := NewReader(strings.NewReader(c.in), "long.csv")
			if err != nil {
				t.Fatal(err)
			}
			var rec Record
			rows := 0
			for {
				err = rd.Read(&rec)
				if err != nil {
					break
				}
				rows++
			}
			if rows != c.rows {
				t.Errorf("read %d rows, want %d", rows, c.rows)
			}
			if c.wantLine == "" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err = %v, want EOF", err)
				}
				return
			}
			if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), c.wantLine) {
				t.Fatalf("err = %v, want ErrLineTooLong naming %q", err, c.wantLine)
			}
			if again := rd.Read(&rec); !errors.Is(again, ErrLineTooLong) {
				t.Fatalf("next Read = %v, want the same final error", again)
			}
		})
	}
	if _, err := NewReader(strings.NewReader(header+long), "h.csv"); !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "h.csv line 1") {
		t.Errorf("long header: err = %v", err)
	}
}

func TestValidateGroup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		label string
		want  string // "" for a valid label, else the error
	}{
		{"burst-shaped", ""},
		{"Région é — 東京", ""},
		{`quoted "group"`, ""},
		{strings.Repeat("x", MaxGroupLen), ""},
		{strings.Repeat("é", MaxGroupLen), ""},
		{"night\u00a0run", "Group must be printable: character 6 is U+00A0"},
		{strings.Repeat("x", MaxGroupLen+1), "Group must be at most 64 characters"},
		{"a,b", "Group must fit one CSV cell: it contains a comma at character 2"},
		{"a\nb", "Group must be printable: character 2 is U+000A"},
		{"a\tb", "Group must be printable: character 2 is U+0009"},
		{"bell\a", "Group must be printable: character 5 is U+0007"},
		{"", "Group must not be blank"},
		{"   ", "Group must not be blank"},
		{"bad\xffutf8", "Group must be valid UTF-8"},
	}
	for _, c := range cases {
		err := ValidateGroup(c.label)
		if c.want == "" {
			if err != nil {
				t.Errorf("ValidateGroup(%q) = %v, want nil", c.label, err)
			}
			continue
		}
		var field interface{ Field() string }
		if err == nil || err.Error() != c.want || !errors.As(err, &field) || field.Field() != "Group" {
			t.Errorf("ValidateGroup(%q) = %v, want %q for field Group", c.label, err, c.want)
		}
	}
}

// FuzzAppendDecimal: the writer's decimal cell is num.AppendDecimal's at
// 3 places, byte for byte, over any value but a negative one (empty:
// None).
func FuzzAppendDecimal(f *testing.F) {
	for _, v := range []float64{0, 0.0004, 0.0005, 0.0015, 1, 1.5, 43, 0.1, 0.7, 2.675, 16921.1235, 123456.789,
		999999999999.9994, 999999999999.9996, 1e12, 1e15, 1.7976931348623157e308, 5e-324, -1, math.Inf(1), math.NaN()} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		want := ""
		if !(v < 0) {
			want = string(num.AppendDecimal(nil, v, decimals))
		}
		if got := string(appendDecimal(nil, v)); got != want || FormatMS(v) != want {
			t.Fatalf("appendDecimal(%v) = %q, FormatMS %q, want %q", v, got, FormatMS(v), want)
		}
	})
}

// TestAppendDecimalIsNum is FuzzAppendDecimal over a sweep: every
// thousandth from 0 to 20, values near each rounding edge, and random
// values on every scale up to 1e13.
func TestAppendDecimalIsNum(t *testing.T) {
	t.Parallel()
	check := func(v float64) {
		if got, want := string(appendDecimal(nil, v)), string(num.AppendDecimal(nil, v, decimals)); got != want {
			t.Fatalf("appendDecimal(%v) = %q, want %q", v, got, want)
		}
	}
	for i := range 20001 {
		v := float64(i) / 1000
		check(v)
		check(math.Nextafter(v, 0))
		check(math.Nextafter(v, 1e20))
		check(v + 0.0005)
		check(math.Nextafter(v+0.0005, 0))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(math.Pow(10, rng.Float64()*13-4) * rng.Float64())
	}
}
