package testkit

import (
	"bytes"
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

// ResultsText is recs as the text of a results file: its header, then a
// row each, as results' own Writer writes them.
func ResultsText(t testing.TB, recs ...results.Record) string {
	t.Helper()
	var b bytes.Buffer
	w, err := results.NewWriter(&b)
	writeAll(t, w, err, recs)
	return b.String()
}

// WriteResults writes recs as a new results file at path (results.Create).
func WriteResults(t testing.TB, path string, recs ...results.Record) {
	t.Helper()
	w, err := results.Create(path)
	writeAll(t, w, err, recs)
}

// writeAll writes recs through w, which opening it returned with err,
// and closes it.
func writeAll(t testing.TB, w *results.Writer, err error, recs []results.Record) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
