package results

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// BenchmarkAppendCSV is the writer's hot path: one Record to one line.
// It must not allocate.
func BenchmarkAppendCSV(b *testing.B) {
	r := sample(7)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendCSV(buf[:0], &r)
	}
}

// BenchmarkWrite is Writer.Write to a sink that costs nothing: the lock,
// the line and the one write.
func BenchmarkWrite(b *testing.B) {
	w, err := NewWriter(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	r := sample(7)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead streams a 10,000-row file through a Reader; ns/row is
// the figure to compare.
func BenchmarkRead(b *testing.B) {
	var file bytes.Buffer
	w, err := NewWriter(&file)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 10_000
	for i := range rows {
		r := sample(i)
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	data := file.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rec Record
	n := 0
	for b.Loop() {
		rd, err := NewReader(bytes.NewReader(data), "bench.csv")
		if err != nil {
			b.Fatal(err)
		}
		for {
			err := rd.Read(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/row")
}
