package testkit

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// ReadRecords reads every record of the results file at path, and fails
// the test on any row that does not read.
func ReadRecords(t testing.TB, path string) []results.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := results.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	for {
		var r results.Record
		if err := rd.Read(&r); errors.Is(err, io.EOF) {
			return recs
		} else if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}
