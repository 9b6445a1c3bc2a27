package analyze

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// FuzzReadForeign feeds arbitrary bytes to the foreign-CSV reader, with
// and without a unit and a status column: it must return a BadInputError
// or an analysis, never panic, never count more events (and skipped
// statuses) than lines, and point only at lines of the file.
func FuzzReadForeign(f *testing.F) {
	seeds := []string{
		"source,benchmark_id,retry_after_ms\ntask013,05-dual-spillover,16648.000\ntask019,x,3\n",
		"retry_after_ms\n1\n\n2\nabc\n-1\n",
		"\ufeffsource_group,retry_after_ms\r\n\"a \"\"q\"\"\",5\r\n",
		"retry_after_ms,g\n\"unterminated,1\n5,\n",
		"a,b\n1,2\n",
		"",
		"retry_after_ms\n1e309\nNaN\n+Inf\n0x10\n",
		"source,note,retry_after_ms\n\"night\nrun\",\"a\r\nb\",5\nday,,6\n",
		"g,retry_after_ms\na,1\n\"open,2\n3,4\n",
		"retry_after_ms\n   \n\"\"\n\"5\"\n",
		"status,retry_after_ms\n429,5\n200,\n 429.0 ,1e3\n,7\nabc,1\n",
		"g,status,retry_after_ms\n\"a\",429\n",
		"g,retry_after_ms\na,1\n\"b,2\nc,3\nd\",4\ne,5\n",   // a stray quote closed by another
		"g,retry_after_ms,note\na,1,\"x, y\nz, w\"\nb,2,\n", // a note of two lines
	}
	for _, s := range seeds {
		f.Add([]byte(s), "g")
	}
	f.Fuzz(func(t *testing.T, data []byte, groupColumn string) {
		for _, cols := range []ForeignColumns{{}, {Group: groupColumn}, {Unit: UnitS, Status: DefaultStatusColumn}, {Status: groupColumn}} {
			tally := NewTally(false)
			err := tally.Read(context.Background(), bytes.NewReader(data), Input{Name: "fuzz.csv", Ordinal: 1}, cols)
			if err != nil {
				var bad *BadInputError
				if !errors.As(err, &bad) {
					t.Fatalf("error is not a BadInputError: %v", err)
				}
				continue
			}
			a, err := tally.Analysis(nil, 1)
			if err != nil {
				var bad *BadInputError
				if !errors.As(err, &bad) {
					t.Fatalf("analysis error is not a BadInputError: %v", err)
				}
				continue
			}
			n := strings.Count(string(data), "\n") + 1
			// Line references point into the file, past the header.
			for _, refs := range [][]LineRef{a.InvalidValues.First, a.UnreadableRows.First} {
				for _, r := range refs {
					if r.Line < 2 || r.Line > n || r.Input != 1 {
						t.Fatalf("line reference %+v outside a file of %d lines", r, n)
					}
				}
			}
			events := 0
			for _, g := range a.Groups {
				events += g.Events
				if results.ValidateGroup(g.Label) != nil {
					t.Fatalf("unpublishable label %q", g.Label)
				}
				for i := 1; i < len(g.Waits); i++ {
					if g.Waits[i] < g.Waits[i-1] || g.Waits[i] < 0 {
						t.Fatalf("waits not sorted non-negative: %v", g.Waits)
					}
				}
			}
			if events+a.OtherStatus > n || a.Overall.Count() > events {
				t.Fatalf("%d events, %d usable from %d lines", events, a.Overall.Count(), n)
			}
		}
	})
}
