package results

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// long runs the tests' volume (.ci/run's long stage): TestReadBlockMatchesRead
// on rows past every block size it tries.
var long = flag.Bool("long", false, "also run the volume cases (.ci/run's long stage)")

// goldenRecords cover every kind of cell: quoted text, absent values,
// rounding to 3 decimals, large numbers and both flag values.
func goldenRecords() []Record {
	full := sample(0)
	odd := sample(1)
	odd.Group = `night "run", second`
	odd.IntendedMS, odd.SentMS, odd.TTFBMS, odd.LatencyMS = 0.0004, 0.0005, 1.0005, 123456789.9876
	odd.WaitMS, odd.UtilizationPct = 999999999999.999, 0
	odd.Dialect, odd.ResetRequestsMS, odd.ResetTokensMS, odd.LimitTokens = DialectIETF, 0, 0.0005, None
	odd.Worker = "11/12"
	absent := Blank()
	absent.RunID, absent.Shape, absent.Group, absent.Seq, absent.Attempt = "ffffffff", ShapeScheduled, GroupScheduled, 7, 2
	absent.Error = ClassTimeout
	return []Record{full, odd, absent}
}

// TestWriterGolden pins the bytes of a results file: the contract other
// tools read. The golden file was written before the column table existed.
func TestWriterGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w, err := NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	recs := goldenRecords()
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join("testdata", "rows.golden.csv")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./results -update writes it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("results file differs from %s:\n got: %s\nwant: %s", path, b.Bytes(), want)
	}
}
