package analyze

import (
	"bytes"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// csvRow is r as the one line (with its newline) a results file holds for
// it, written by results' own Writer.
func csvRow(r *results.Record) []byte {
	var b bytes.Buffer
	w, err := results.NewWriter(&b)
	if err == nil {
		err = w.Write(r)
	}
	if err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	_, row, _ := bytes.Cut(b.Bytes(), []byte("\n"))
	return row
}

func TestCSVRow(t *testing.T) {
	t.Parallel()
	r := results.Blank()
	r.Shape, r.Group, r.Status = results.ShapeBurst, results.GroupBurst, 429
	row := csvRow(&r)
	if bytes.Count(row, []byte("\n")) != 1 || !bytes.HasSuffix(row, []byte("\n")) || !bytes.Contains(row, []byte(",429,")) {
		t.Fatalf("csvRow = %q, want one line with the status", row)
	}
}
