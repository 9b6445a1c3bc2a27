package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
)

// analysisColumns are the columns package analyze keeps.
var analysisColumns = []string{"shape", "group", "status", "error", "intended_ms", "sent_ms", "wait_ms", "wait_source", "spillover", "dialect"}

// headers are layouts a results file may have: this version's, an older
// one without the trailing columns, known columns in another order, and
// unknown columns among them.
var headers = []string{
	header,
	strings.Join(Columns[:requiredColumns], ","),
	strings.Join(Columns[:24], ","),
	strings.Join(Columns[:requiredColumns], ",") + ",dialect,worker,max_tokens,wait_ms",
	strings.Join(Columns[:requiredColumns], ",") + ",limit_tokens,policy,decision,fallback,dialect,reset_requests_ms,reset_tokens_ms,limit_requests,prompt_tokens",
}

// general decodes a row as Read does: the reference of the fast path.
func general(index []int, row []byte, rec *Record) error {
	fields, err := rowdecode.SplitCSVLine(nil, row)
	if err == nil {
		err = decodeFields(index, fields, rec)
	}
	if err != nil {
		return fmt.Errorf("%s line %d: %w", "f.csv", 2, err)
	}
	return nil
}

// kept describes the fields of the kept columns, floats to the bit.
func kept(rec *Record, keep []string) string {
	var b strings.Builder
	for _, c := range table {
		if len(keep) == 0 || slices.Contains(keep, c.name) {
			v := reflect.ValueOf(c.field(rec)).Elem().Interface()
			if f, ok := v.(float64); ok {
				v = math.Float64bits(f)
			}
			fmt.Fprintf(&b, "%s=%v ", c.name, v)
		}
	}
	return b.String()
}

// sameKept reports whether a and b hold the same kept fields, floats to
// the bit (kept, which says the same, is for a failure's message).
func sameKept(a, b *Record, keep []string) bool {
	for _, c := range table {
		if len(keep) == 0 || slices.Contains(keep, c.name) {
			va, vb := reflect.ValueOf(c.field(a)).Elem(), reflect.ValueOf(c.field(b)).Elem()
			if va.Kind() == reflect.Float64 {
				if math.Float64bits(va.Float()) != math.Float64bits(vb.Float()) {
					return false
				}
			} else if !va.Equal(vb) {
				return false
			}
		}
	}
	return true
}

// checkAgainstGeneral decodes row with a LineDecoder and with the general
// decoder, and fails unless both give the same error, or the same kept
// fields. Its decoders are new (decoders reuses them over a table).
func checkAgainstGeneral(t *testing.T, hdr string, row []byte, keep []string) {
	t.Helper()
	(&decoders{}).check(t, hdr, row, keep)
}

// decoders are the differential check's LineDecoders, by header and kept
// columns: made once and reused for every row, as a read makes them once
// for a file (a table of rows checked with new ones each time spent a
// third of its CPU making them: issue 39). The zero value is ready.
type decoders struct{ m map[string]*decoderPair }

// decoderPair is a header's layout, a decoder of it and one that knows
// its rows read (ReadableDecoder).
type decoderPair struct {
	index       []int
	d, readable *lineDecoder
}

func (ds *decoders) get(t *testing.T, hdr string, keep []string) *decoderPair {
	t.Helper()
	key := hdr + "\n" + strings.Join(keep, ",")
	if p := ds.m[key]; p != nil {
		return p
	}
	head, _ := rowdecode.SplitCSVLine(nil, []byte(hdr))
	p := &decoderPair{index: layout(head)}
	var err error
	if p.d, err = newLineDecoder("f.csv", p.index, keep); err != nil {
		t.Fatal(err)
	}
	if p.readable, err = newLineDecoder("f.csv", p.index, keep); err != nil {
		t.Fatal(err)
	}
	p.readable.markReadable()
	if ds.m == nil {
		ds.m = map[string]*decoderPair{}
	}
	ds.m[key] = p
	return p
}

func (ds *decoders) check(t *testing.T, hdr string, row []byte, keep []string) {
	t.Helper()
	p := ds.get(t, hdr, keep)
	fast, want := sample(3), sample(3)
	errFast := p.d.decode(row, &fast, 2)
	errWant := general(p.index, row, &want)
	if fmt.Sprint(errFast) != fmt.Sprint(errWant) {
		t.Fatalf("header %q row %q: LineDecoder error %v, Read's %v", hdr, row, errFast, errWant)
	}
	if errWant == nil && !sameKept(&fast, &want, keep) {
		t.Fatalf("header %q row %q:\nLineDecoder %s\n      Read %s", hdr, row, kept(&fast, keep), kept(&want, keep))
	}
	if errWant != nil {
		return
	}
	// A row that reads, read again by a decoder that checks only what it
	// keeps (ReadableDecoder): the same kept fields.
	again := sample(3)
	if err := p.readable.decode(row, &again, 2); err != nil || !sameKept(&again, &want, keep) {
		t.Fatalf("header %q row %q, known to read (%v):\nLineDecoder %s\n      Read %s", hdr, row, err, kept(&again, keep), kept(&want, keep))
	}
}

// FuzzLineDecoder is the differential test of the fast path: for any row
// and any of the headers, a LineDecoder and the Reader's own decoding
// agree on the error and on every field kept.
func FuzzLineDecoder(f *testing.F) {
	for i := range 4 {
		r := sample(i)
		f.Add(uint8(i), bytes.TrimSuffix(appendCSV(nil, &r), []byte("\n")))
	}
	for _, row := range []string{
		"5eed1234,burst,burst-shaped,0,1,0,0,3,80,400,429,,0.5,1,0.5,retry-after-ms,0,,,,1200,,,100",
		"5eed1234,scheduled,scheduled-shaped,1,1,,3,4,81,401,200,,,,,none,0,,,,1200,,100,100",
		"x,burst,g,007,1,,1e3,2,,1,429,,,,+5,retry-after-ms,1",
		"x,burst,g,1,1,,.5,2.,,1,429,,,,-0,retry-after-ms,1",
		"x,burst,g,1,1,,1000000000000000,999999999999999.9,,1,429,,,,0.1234567890123456,retry-after-ms,1",
		"x,burst,g,1,1,,1,2,,1,429,,,,12,retry-after-ms,1,,,,,,,,,,,azure,inf,NaN,0x10,1_0",
		"x,\"burst\",\"a,b\",1,1,,1,2,,1,429,,\"Wed, 21 Oct 2015\",,12,retry-after-ms,1",
		"x,burst,g\",1,1,,1,2,,1,429,,,,12,none,1",
		"x,burst,g,1,1,,1,2,,1,429,,,,12,none",
		"x,burst,g,1,1,,1,2,,1,429,,,,12,none,1,,,,,,,,,,,,,,,,,,,,,,,,,,extra",
		"x,burst,g,99999999999999999999,1,,1,2,,1,429,,,,12,none,1",
		"x,burst,g,123456789012345678,1,,1,2,,1,429,,,,12,none,1",
		"x,burst,g,1,1, 2,1,2,,1,429,,,,12 ,none,1",
		",,,0,0,,,,,,0,,,,,,",
	} {
		f.Add(uint8(0), []byte(row))
		f.Add(uint8(3), []byte(row))
	}
	f.Fuzz(func(t *testing.T, h uint8, row []byte) {
		if bytes.IndexByte(row, '\n') >= 0 {
			return // a row is one line
		}
		hdr := headers[int(h)%len(headers)]
		checkAgainstGeneral(t, hdr, row, nil)
		checkAgainstGeneral(t, hdr, row, analysisColumns)
	})
}

// cells are the values the differential check puts in a row's cells:
// plain and odd numbers, words, quotes, white space and control bytes.
var cells = []string{"", "0", "1", "7", "007", "12.5", "40.125", "1.", ".5", "-1", "+1", "1e3", "abc", "burst", "scheduled",
	"429", "none", "retry-after-ms", "azure", " 3", "3 ", "999999999999999", "1000000000000000", "0.000000000000001",
	"123456789012345678", "1234567890123456789", "\"q\"", "a\"b", "1.2.3", "\r", "\u00a0"}

// keeps are the column sets the differential check decodes: every column,
// analyze's, and those of its second read.
var keeps = [][]string{nil, analysisColumns, {"shape", "group", "run_id", "worker", "intended_ms", "prompt_tokens", "max_tokens"}}

// checkEveryHeader is the differential check of row under every header
// and every set of kept columns, with new decoders.
func checkEveryHeader(t *testing.T, row []byte) {
	t.Helper()
	(&decoders{}).checkEveryHeader(t, row)
}

// checkEveryHeader is the differential check of row under every header
// and every set of kept columns, with ds's decoders.
func (ds *decoders) checkEveryHeader(t *testing.T, row []byte) {
	t.Helper()
	for _, hdr := range headers {
		for _, keep := range keeps {
			ds.check(t, hdr, row, keep)
		}
	}
}

// FuzzLineDecoderCells is FuzzLineDecoder over rows made of cells: each
// byte of picks chooses the next cell, the first the number of cells
// (12 to 37), so the fuzzer spends its time on rows that nearly read.
func FuzzLineDecoderCells(f *testing.F) {
	f.Add([]byte{5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add([]byte{25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{13, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12})
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) == 0 {
			return
		}
		parts := make([]string, 12+int(picks[0])%26)
		for i := range parts {
			if p := 1 + i; p < len(picks) {
				parts[i] = cells[int(picks[p])%len(cells)]
			}
		}
		checkEveryHeader(t, []byte(strings.Join(parts, ",")))
	})
}

// TestLineDecoderAgrees runs the differential check on a table of rows:
// each cell value in each column of a row ptuprobe writes, and that row
// cut to every length and lengthened past the header. (The fuzz seeds
// run too; FuzzLineDecoder and FuzzLineDecoderCells search further.)
func TestLineDecoderAgrees(t *testing.T) {
	t.Parallel()
	var ds decoders // one set for the table, as a read has for a file
	r := sample(3)
	r.RetryAfter = "" // no quoted cell: the fast path's row
	base := strings.Split(string(bytes.TrimSuffix(appendCSV(nil, &r), []byte("\n"))), ",")
	for col := range base {
		for _, c := range cells {
			row := slices.Clone(base)
			row[col] = c
			ds.checkEveryHeader(t, []byte(strings.Join(row, ",")))
		}
	}
	for n := range len(base) + 3 {
		row := slices.Clone(base)
		if n <= len(base) {
			row = row[:n]
		} else {
			row = append(row, cells[n%len(cells)], "x")
		}
		ds.checkEveryHeader(t, []byte(strings.Join(row, ",")))
	}
}

// TestFastPathTakesWrittenRows: the rows ptuprobe writes are decoded by
// the fast path; were they not, it would be correct and slow.
func TestFastPathTakesWrittenRows(t *testing.T) {
	t.Parallel()
	head, _ := rowdecode.SplitCSVLine(nil, []byte(header))
	d, err := newLineDecoder("f.csv", layout(head), analysisColumns)
	if err != nil {
		t.Fatal(err)
	}
	recs := goldenRecords()
	for i := range 8 {
		recs = append(recs, sample(i))
	}
	for i := range recs {
		recs[i].RetryAfter = "" // an HTTP-date is quoted: the general path's
		row := bytes.TrimSuffix(appendCSV(nil, &recs[i]), []byte("\n"))
		if bytes.IndexByte(row, '"') >= 0 {
			continue // a group with a quote: the general path's
		}
		var rec Record
		if !d.decodePlain(row, &rec) {
			t.Errorf("row %q is not taken by the fast path", row)
		}
	}
}

// TestReadableDecoder: the rows ptuprobe writes, read under every header
// by a decoder that knows they read (ReadableDecoder) and checks only the
// columns it keeps, give the fields the general decoder gives
// (checkAgainstGeneral).
func TestReadableDecoder(t *testing.T) {
	t.Parallel()
	recs := goldenRecords()
	for i := range 8 {
		recs = append(recs, sample(i))
	}
	for i := range recs {
		row := bytes.TrimSuffix(appendCSV(nil, &recs[i]), []byte("\n"))
		checkEveryHeader(t, row)
	}
}

// plainValue is plainDecimal and decimalValue together.
func plainValue(b []byte) (v float64, n int, ok bool) {
	m, scale, n, ok := plainDecimal(b)
	if !ok {
		return 0, 0, false
	}
	return decimalValue(m, scale), n, true
}

// checkPlainNumber checks that the strict parsers read b, a plain decimal
// of at most 15 digits, as ParseFloat and Atoi do, whether a cell ends it.
func checkPlainNumber(t *testing.T, b []byte) {
	t.Helper()
	want, err := strconv.ParseFloat(string(b), 64)
	for _, cell := range [][]byte{b, append(slices.Clone(b), ",7,x"...)} {
		got, n, ok := plainValue(cell)
		if !ok || n != len(b) || err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("plainValue(%q) = %v, %d, %v; ParseFloat %v, %v", cell, got, n, ok, want, err)
		}
	}
	if bytes.IndexByte(b, '.') < 0 {
		want, err := strconv.Atoi(string(b))
		if got, n, ok := plainCount(append(slices.Clone(b), ',')); !ok || n != len(b) || err != nil || got != want {
			t.Fatalf("plainCount(%q) = %v, %d, %v; Atoi %v, %v", b, got, n, ok, want, err)
		}
	}
}

// FuzzPlainNumbers: any plain decimal of 1 to 15 digits, with at most one
// point inside it, reads as ParseFloat and Atoi read it.
func FuzzPlainNumbers(f *testing.F) {
	f.Add(uint64(12345), uint8(5), uint8(2))
	f.Add(uint64(999999999999999), uint8(15), uint8(0))
	f.Add(uint64(1), uint8(15), uint8(14))
	f.Fuzz(func(t *testing.T, m uint64, digits, point uint8) {
		d := 1 + int(digits)%15
		b := []byte(fmt.Sprintf("%0*d", d, m%uint64(math.Pow10(d))))
		if p := int(point) % (d + 1); p > 0 && p < d {
			b = slices.Insert(b, p, '.')
		}
		checkPlainNumber(t, b)
	})
}

// TestPlainNumbers: the strict parsers give ParseFloat's float64 to the
// bit and Atoi's int, stop at the comma that ends the cell, and leave
// every other form to the general path.
func TestPlainNumbers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 { // a sample; FuzzPlainNumbers searches further
		digits := 1 + rng.IntN(15)
		var b []byte
		for range digits {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if p := rng.IntN(digits + 1); p > 0 && p < digits {
			b = slices.Insert(b, p, '.')
		}
		checkPlainNumber(t, b)
	}
	for _, b := range []string{"0", "0.0", "000000000000000", "999999999999999", "99999999999999.9", "0.00000000000001", "1.5", "12345.678901234"} {
		checkPlainNumber(t, []byte(b))
	}
	for _, s := range []string{"", ",5"} {
		if v, n, ok := plainValue([]byte(s)); !ok || n != 0 || v != None {
			t.Errorf("plainDecimal(%q) = %v, %d, %v, want an empty cell", s, v, n, ok)
		}
		if v, n, ok := plainCount([]byte(s)); !ok || n != 0 || v != None {
			t.Errorf("plainCount(%q) = %v, %d, %v, want an empty cell", s, v, n, ok)
		}
	}
	for _, s := range []string{".", "1.", ".5", "1..2", "1.2.3", "-1", "+1", "1e3", " 1", "1 ", "0x10", "inf", "1_0", "1234567890123456", "12345678901234.56", "1.5x,2"} {
		if v, _, ok := plainValue([]byte(s)); ok {
			t.Errorf("plainDecimal(%q) = %v, want it left to the general path", s, v)
		}
	}
	for _, s := range []string{"1.5", "-1", "+1", " 1", "1 ", "1234567890123456789", "7x"} {
		if v, _, ok := plainCount([]byte(s)); ok {
			t.Errorf("plainCount(%q) = %v, want it left to the general path", s, v)
		}
	}
}

// outcome is what a read gives for one line: a row and its line number,
// or an error's message (end, truncated last line or a final error
// included). Outcomes compare with ==, which costs far less than
// formatting them; String is for a failure's message.
type outcome struct {
	line int
	rec  Record
	msg  string
}

func (o outcome) String() string {
	if o.msg != "" {
		return o.msg
	}
	return fmt.Sprintf("line %d: %+v", o.line, o.rec)
}

// blockOutcomes reads content with readBlock and Rows (buffer size size),
// one outcome per row or error, as readOutcomes does with Read; they are
// yielded, not kept, as a file of rows is long.
func blockOutcomes(t *testing.T, content string, size int) iter.Seq[outcome] {
	return func(yield func(outcome) bool) {
		rd, err := NewReader(strings.NewReader(content), "f.csv")
		if err != nil {
			t.Fatal(err)
		}
		d, err := rd.decoder()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, size)
		var rec Record
		for {
			blk, err := rd.readBlock(buf)
			if errors.Is(err, io.EOF) {
				yield(outcome{msg: fmt.Sprintf("end, truncated %d", rd.Truncated())})
				return
			}
			if err != nil {
				yield(outcome{msg: "final: " + err.Error()})
				return
			}
			for line, err := range d.Rows(blk, &rec) {
				o := outcome{line: line, rec: rec}
				if err != nil {
					if errors.Is(err, ErrLineTooLong) {
						yield(outcome{msg: "final: " + err.Error()})
						return
					}
					o = outcome{msg: err.Error()}
				}
				if !yield(o) {
					return
				}
			}
		}
	}
}

func readOutcomes(t *testing.T, content string) []outcome {
	t.Helper()
	rd, err := NewReader(strings.NewReader(content), "f.csv")
	if err != nil {
		t.Fatal(err)
	}
	var out []outcome
	var rec Record
	for {
		err := rd.Read(&rec)
		switch {
		case errors.Is(err, io.EOF):
			return append(out, outcome{msg: fmt.Sprintf("end, truncated %d", rd.Truncated())})
		case errors.Is(err, ErrLineTooLong):
			return append(out, outcome{msg: "final: " + err.Error()})
		case err != nil:
			out = append(out, outcome{msg: err.Error()})
		default:
			out = append(out, outcome{line: rd.Line(), rec: rec})
		}
	}
}

// TestReadBlockMatchesRead: cutting a file into blocks and decoding their
// rows gives Read's rows, errors, line numbers and truncated last line,
// whatever the size of the blocks.
func TestReadBlockMatchesRead(t *testing.T) {
	t.Parallel()
	// Rows past the two smaller block sizes tried, so that their blocks
	// end mid-file, and within the largest (a file in one block); under
	// -long (.ci/run) past 4 MiB, so that blocks of every size end
	// mid-file (three times the reading: issue 39).
	size := MaxLine + 256<<10
	if *long {
		size = 4<<20 + 64<<10
	}
	var rows strings.Builder
	for i := 0; rows.Len() <= size; i++ {
		r := sample(i)
		if i%3 == 0 {
			r.RetryAfter = "" // unquoted: the fast path
		}
		rows.Write(appendCSV(nil, &r))
		switch i % 1000 {
		case 7:
			rows.WriteString("\n   \n")
		case 8:
			rows.WriteString("x,burst,g,notanumber,1,,0,0,,1,429,,,,,none,0\n")
		case 9:
			rows.WriteString("x,burst,g,1,1,,0,0,,1,429,,,,,none,0,\"open\r\n")
		case 10:
			rows.WriteString("x,burst,g,1,1,,1e1,0,,1,429,,,,-0,none,0\r\r\n")
		}
	}
	r := sample(1)
	row := string(appendCSV(nil, &r))
	long := strings.Repeat("y", MaxLine+10)
	head := header + "\n"
	cases := []struct{ name, content string }{
		{"rows, blanks, junk and a truncated end", head + rows.String() + "x,burst,g,1"},
		{"ends with white space", head + rows.String() + "  "},
		{"a long line within a block", head + rows.String() + long + "\n" + row},
		{"a long line past a block", head + row + strings.Repeat("z", 3*MaxLine) + "\n" + row},
		{"a long truncated last line", head + row + long},
		{"a line of MaxLine bytes", head + strings.Repeat(" ", MaxLine-len(row)) + row + row},
		{"a line of MaxLine bytes, truncated", head + row + strings.Repeat("x", MaxLine)},
		{"the header alone", head},
		{"the header alone, without its newline", header},
		{"an older header", strings.Join(Columns[:24], ",") + "\n" + "5eed1234,burst,burst-shaped,0,1,0,0,3,80,400,429,,0.5,1,0.5,retry-after-ms,0,,,,1200,,,100\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := readOutcomes(t, c.content)
			for _, size := range []int{MaxLine + 1, MaxLine + 4093, 4 << 20} {
				n := 0
				for got := range blockOutcomes(t, c.content, size) {
					if n >= len(want) {
						t.Fatalf("block size %d: more outcomes than Read's %d; outcome %d %.300s", size, len(want), n, got.String())
					}
					if got != want[n] {
						t.Fatalf("block size %d, outcome %d:\n got %.300s\nwant %.300s", size, n, got.String(), want[n].String())
					}
					n++
				}
				if n != len(want) {
					t.Fatalf("block size %d: %d outcomes, Read gives %d; Read's next %.300s", size, n, len(want), want[n].String())
				}
			}
		})
	}
	rd, _ := NewReader(strings.NewReader(head), "f.csv")
	if _, err := rd.readBlock(make([]byte, MaxLine)); err == nil {
		t.Error("readBlock took a buffer no longer than MaxLine")
	}
}

// BenchmarkRows decodes a 10,000-row block with the columns package
// analyze keeps; ns/row compares with BenchmarkRead.
func BenchmarkRows(b *testing.B) {
	var file bytes.Buffer
	w, err := NewWriter(&file)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 10_000
	for i := range rows {
		r := sample(i)
		r.RetryAfter = ""
		if i%2 == 1 {
			r.Shape, r.Group, r.Wave = ShapeScheduled, GroupScheduled, None
		}
		if i%3 == 1 {
			r.Status, r.WaitMS, r.WaitSource, r.RetryAfterMS = 200, None, WaitNone, ""
		}
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	data := file.Bytes()
	rd, err := NewReader(bytes.NewReader(data), "bench.csv")
	if err != nil {
		b.Fatal(err)
	}
	blk, err := rd.readBlock(make([]byte, 4<<20))
	if err != nil {
		b.Fatal(err)
	}
	// The analysis's columns, and the overshoot picture's second read's
	// (analyze/reread.go), rows known to read.
	analysis, err := rd.decoder(analysisColumns...)
	if err != nil {
		b.Fatal(err)
	}
	again, err := rd.readableDecoder("shape", "group", "run_id", "worker", "intended_ms", "prompt_tokens", "max_tokens")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		d    *lineDecoder
	}{{"analysis", analysis}, {"readable", again}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(blk.Text)))
			b.ReportAllocs()
			var rec Record
			n := 0
			for b.Loop() {
				for _, err := range c.d.Rows(blk, &rec) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/row")
		})
	}
}

// TestEveryColumnHasAKind: the fast path knows each column's cells and
// field; a column made without its constructor's kind would leave every
// row to the general path.
func TestEveryColumnHasAKind(t *testing.T) {
	t.Parallel()
	want := map[cellKind]reflect.Type{
		kindText: reflect.TypeFor[*string](), kindCount: reflect.TypeFor[*int](), kindOptionalCount: reflect.TypeFor[*int](),
		kindDecimal: reflect.TypeFor[*float64](), kindFlag: reflect.TypeFor[*bool](),
	}
	for _, c := range table {
		var rec Record
		if w, ok := want[c.kind]; !ok || c.field == nil || reflect.TypeOf(c.field(&rec)) != w {
			t.Errorf("column %s: kind %d, field %v", c.name, c.kind, c.field != nil)
		}
	}
}

// TestSkipCells: eight bytes at a time, the k-th comma is the one a byte
// loop finds, whatever the bytes around it (bytes one off a comma, a zero
// byte, the high bit set).
func TestSkipCells(t *testing.T) {
	t.Parallel()
	alphabet := []byte{',', ',', '+', '-', 0, 0x80, 0xac, 'a', '1', '.'}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 { // a sample; FuzzSkipCells searches further
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		checkSkipCells(t, b)
	}
}

// checkSkipCells compares skipCells on b with a byte loop, for the 1st to
// the 12th comma.
func checkSkipCells(t *testing.T, b []byte) {
	t.Helper()
	for k := 1; k <= 12; k++ {
		want, seen := -1, 0
		for i, c := range b {
			if c == ',' {
				if seen++; seen == k {
					want = i + 1
					break
				}
			}
		}
		if got := skipCells(b, k); got != want {
			t.Fatalf("%q, comma %d: %d, want %d", b, k, got, want)
		}
	}
}

// FuzzSkipCells: for any bytes, skipCells finds the comma a byte loop finds.
func FuzzSkipCells(f *testing.F) {
	f.Add([]byte("a,b,,c,+1,-2,\x00,\x80,\xac,,,,,,,,,x"))
	f.Add([]byte(",,,,,,,,,,,,,,,,"))
	f.Fuzz(checkSkipCells)
}

// FuzzCellLen: for any bytes, cellLen finds the first comma (or the end)
// bytes.IndexByte finds, from every offset.
func FuzzCellLen(f *testing.F) {
	f.Add([]byte("c0ffee42,scheduled,scheduled-shaped,,1,0.25,\x2c\xac\x00,,,,,,,,x"))
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for off := range len(b) + 1 {
			want := bytes.IndexByte(b[off:], ',')
			if want < 0 {
				want = len(b) - off
			}
			if got := cellLen(b[off:]); got != want {
				t.Fatalf("%q from %d: %d, want %d", b, off, got, want)
			}
		}
	})
}
