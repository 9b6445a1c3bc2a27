package rowdecode_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
	"github.com/ptuprobe/ptuprobe/results"
)

// file is a results file of n rows, written by results' own Writer.
func file(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	w, err := results.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := results.Blank()
		r.Shape, r.Group, r.Seq, r.Status, r.WaitMS = results.ShapeBurst, results.GroupBurst, i, 429, float64(i)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestInstalled: the fast path package results installs reads what Read
// reads, with and without the knowledge that every row reads.
func TestInstalled(t *testing.T) {
	t.Parallel()
	content := file(t, 300) + "\nnot,a,row\n"
	var want []results.Record
	var wantErrs []int
	rd, _ := results.NewReader(strings.NewReader(content), "r.csv")
	for {
		var r results.Record
		err := rd.Read(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			wantErrs = append(wantErrs, rd.Line())
			continue
		}
		want = append(want, r)
	}
	if len(want) != 300 || !slices.Equal(wantErrs, []int{303}) {
		t.Fatalf("Read: %d rows, errors on lines %v", len(want), wantErrs)
	}

	rd, _ = results.NewReader(strings.NewReader(content), "r.csv")
	dec, err := rowdecode.NewDecoder[results.Record](rd)
	if err != nil {
		t.Fatal(err)
	}
	dec = dec.Clone()
	var got []results.Record
	var gotErrs []int
	buf := make([]byte, results.MaxLine+1)
	for {
		b, err := rowdecode.ReadBlock(rd, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var r results.Record
		for line, err := range dec.Rows(b, &r) {
			if err != nil {
				gotErrs = append(gotErrs, line)
				continue
			}
			got = append(got, r)
		}
	}
	if !slices.Equal(got, want) || !slices.Equal(gotErrs, wantErrs) {
		t.Fatalf("blocks: %d rows, errors on lines %v; want %d rows, %v", len(got), gotErrs, len(want), wantErrs)
	}

	rd, _ = results.NewReader(strings.NewReader(file(t, 3)), "r.csv")
	readable, err := rowdecode.NewReadableDecoder[results.Record](rd, "seq", "wait_ms")
	if err != nil {
		t.Fatal(err)
	}
	b, err := rowdecode.ReadBlock(rd, buf)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	var r results.Record
	for _, err := range readable.Rows(b, &r) {
		if err != nil || r.WaitMS != float64(r.Seq) {
			t.Fatalf("row %+v, error %v", r, err)
		}
		seqs = append(seqs, r.Seq)
	}
	if !slices.Equal(seqs, []int{0, 1, 2}) {
		t.Fatalf("seqs %v", seqs)
	}
	if _, err := rowdecode.NewDecoder[results.Record](rd, "no-such-column"); err == nil {
		t.Fatal("a column results does not have was taken")
	}
}

func TestSplitCSVLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line    string
		want    []string
		wantErr bool
	}{
		{line: "", want: []string{""}},
		{line: "a,b,,c", want: []string{"a", "b", "", "c"}},
		{line: `"a,b",c`, want: []string{"a,b", "c"}},
		{line: `"say ""hi""",x`, want: []string{`say "hi"`, "x"}},
		{line: `a,""`, want: []string{"a", ""}},
		{line: `"open`, wantErr: true},
		{line: `"a"b`, wantErr: true},
		{line: `a"b`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := rowdecode.SplitCSVLine(nil, []byte(tt.line))
		if (err != nil) != tt.wantErr || (!tt.wantErr && !slices.Equal(got, tt.want)) {
			t.Errorf("SplitCSVLine(%q) = %q, %v", tt.line, got, err)
		}
	}
}
