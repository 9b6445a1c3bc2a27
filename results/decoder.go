package results

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math/bits"
	"slices"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
)

// lineDecoder decodes the rows of one results file that a caller cut into
// blocks itself (rowdecode.ReadBlock), so that several goroutines can
// decode them at once, each with its own lineDecoder (Clone). It is the
// Reader's decoding without the reading, and results' implementation of
// rowdecode.Decoder:
//
//   - A line it decodes without error is a line Read reads without error,
//     and the other way round; an error is the one Read returns for it.
//   - It fills only the Record fields of the columns it keeps, with what
//     Read puts there; the other fields are left as they were, or hold
//     anything (the fast path skips them, the general path fills them).
//
// Its fast path is for the rows ptuprobe writes: no quote anywhere in the
// line, each number plain digits with at most one point inside (at most
// 15 digits; 18 for an integer). Such a row is decoded from the bytes of
// the line: cells are cut at commas without a string each, text cells it
// keeps are interned (a handful of shapes, groups, sources and dialects
// repeat over millions of rows), numbers it keeps are read by a strict
// parser whose result is exactly strconv's (decimalValue says why), and
// the numbers it does not keep are only checked to be plain. Any other
// line — a quote, an exponent, a sign, a column in an unexpected form, a
// row the fast path would have to reject — goes through the Reader's own
// decoding (rowdecode.SplitCSVLine and the column table), so every error, and every
// value of an unusual row, comes from the one general decoder.
// FuzzlineDecoder checks the two against each other.
type lineDecoder struct {
	name  string
	index []int  // index[i] = position of table[i] in the file's header, or -1
	keep  []bool // keep[i]: fill the field of table[i]
	// columnAt[j] is the table column at position j of the file, up to
	// the last the table reads (-1: one it does not know). absent are the
	// kept columns the file lacks, which read as empty cells; plain is
	// false when a column the file lacks cannot be empty (a count), so
	// that no row is plain.
	columnAt []int
	absent   []int
	plain    bool
	// ops[j] is how the fast path reads the cell at position j (cellOps).
	ops []cellOp
	// readable: the rows are known to read without error
	// (Reader.readableDecoder), so the cells of the columns not kept are
	// only skipped (decodeReadable); kept are the file positions of the
	// kept columns, ascending.
	readable bool
	kept     []int
	// Scratch, and what makes a lineDecoder unsafe for concurrent use.
	fields []string                // the general path's cells
	texts  map[string]string       // interned text cells
	seen   [][internSlots]seenText // by table column: text cells seen lately (recent)
	fill   fieldsOf                // the kept fields of the Record being filled
}

// fieldsOf are the fields of one Record that a lineDecoder fills, by
// position in the file (nil where it fills none, or of another kind):
// found once per Record a block is decoded into (bind), not once per
// cell.
type fieldsOf struct {
	rec   *Record
	texts []*string
	nums  []*float64
	ints  []*int
	flags []*bool
}

// bind makes d fill rec's fields.
func (d *lineDecoder) bind(rec *Record) {
	f := &d.fill
	if f.rec == rec {
		return
	}
	n := len(d.columnAt)
	*f = fieldsOf{rec: rec, texts: make([]*string, n), nums: make([]*float64, n), ints: make([]*int, n), flags: make([]*bool, n)}
	for j, i := range d.columnAt {
		if i < 0 || !d.keep[i] {
			continue
		}
		switch p := table[i].field(rec).(type) {
		case *string:
			f.texts[j] = p
		case *float64:
			f.nums[j] = p
		case *int:
			f.ints[j] = p
		case *bool:
			f.flags[j] = p
		}
	}
}

// cellOp is how the fast path reads one cell of a file: by the kind of
// its column, and whether the cell is kept (filled into the Record) or
// only checked to be plain. One small integer per cell, so that the loop
// over a row's cells is one switch.
type cellOp uint8

const (
	opSkip          cellOp = iota // any text up to the comma: an unknown column, text or a flag not kept
	opText                        // kept text
	opFlag                        // kept flag
	opDecimal                     // kept decimal
	opCheckDecimal                // a decimal not kept
	opCount                       // kept count, never empty
	opCheckCount                  // a count not kept, never empty
	opOptCount                    // kept count, or empty
	opCheckOptCount               // a count not kept, or empty
	opGeneral                     // a kind the fast path does not know: the general path reads the row
)

// opOf is the cellOp of table column i (−1: a column the reader does
// not know), kept or not.
func opOf(i int, keep bool) cellOp {
	if i < 0 {
		return opSkip
	}
	switch k := table[i].kind; {
	case k == kindText && keep:
		return opText
	case k == kindFlag && keep:
		return opFlag
	case k == kindText || k == kindFlag:
		return opSkip
	case k == kindDecimal && keep:
		return opDecimal
	case k == kindDecimal:
		return opCheckDecimal
	case k == kindCount && keep:
		return opCount
	case k == kindCount:
		return opCheckCount
	case k == kindOptionalCount && keep:
		return opOptCount
	case k == kindOptionalCount:
		return opCheckOptCount
	}
	return opGeneral
}

// maxInterned bounds the interned texts of one lineDecoder: past it a new
// text costs a string, as it would without interning.
const maxInterned = 4096

// newLineDecoder keeps the columns named in keep, or every column.
func newLineDecoder(name string, index []int, keep []string) (*lineDecoder, error) {
	d := &lineDecoder{name: name, index: index, keep: make([]bool, len(table)), texts: map[string]string{}, seen: make([][internSlots]seenText, len(table))}
	for _, k := range keep {
		i := slices.IndexFunc(table, func(c column) bool { return c.name == k })
		if i < 0 {
			return nil, fmt.Errorf("no column %q in a results file", k)
		}
		d.keep[i] = true
	}
	d.plain = true
	for i, j := range index {
		d.keep[i] = d.keep[i] || len(keep) == 0
		if j < 0 {
			if k := table[i].kind; k == kindCount || k == kindUnknown {
				d.plain = false
			} else if d.keep[i] {
				d.absent = append(d.absent, i)
			}
			continue
		}
		for len(d.columnAt) <= j {
			d.columnAt = append(d.columnAt, -1)
		}
		d.columnAt[j] = i
	}
	d.ops = make([]cellOp, len(d.columnAt))
	for j, i := range d.columnAt {
		d.ops[j] = opOf(i, i >= 0 && d.keep[i])
	}
	return d, nil
}

// Clone returns a lineDecoder of the same file and columns that shares no
// scratch with d, for another goroutine.
func (d *lineDecoder) Clone() rowdecode.Decoder[Record] { return d.clone() }

func (d *lineDecoder) clone() *lineDecoder {
	return &lineDecoder{
		name: d.name, index: d.index, keep: d.keep, columnAt: d.columnAt, absent: d.absent, plain: d.plain, ops: d.ops,
		readable: d.readable, kept: d.kept,
		texts: map[string]string{}, seen: make([][internSlots]seenText, len(table)),
	}
}

// Rows decodes the rows of b in order: for each line that is not blank it
// fills rec and yields the line's number and Read's error for it (nil when
// the row reads). A line longer than MaxLine yields Read's final error,
// wrapping ErrLineTooLong, and ends the rows.
func (d *lineDecoder) Rows(b rowdecode.Block, rec *Record) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		text, n := b.Text, b.Line
		for len(text) > 0 {
			end := bytes.IndexByte(text, '\n') + 1
			if end == 0 { // a Block holds whole lines; be safe with any other
				end = len(text)
			}
			line := text[:end]
			text = text[end:]
			if len(line) > lineCap {
				yield(n, fmt.Errorf("read %s line %d: %w", d.name, n, ErrLineTooLong))
				return
			}
			row, blank := rowOf(line)
			if !blank && !yield(n, d.decode(row, rec, n)) {
				return
			}
			n++
		}
	}
}

// decode fills rec from one row (its line end trimmed); line numbers the
// error as Read does.
func (d *lineDecoder) decode(row []byte, rec *Record, line int) error {
	if d.readable && d.plain {
		if d.decodeReadable(row, rec) {
			return nil
		}
	} else if d.decodePlain(row, rec) {
		return nil
	}
	var err error
	if d.fields, err = rowdecode.SplitCSVLine(d.fields[:0], row); err == nil {
		err = decodeFields(d.index, d.fields, rec)
	}
	if err != nil {
		return fmt.Errorf("%s line %d: %w", d.name, line, err)
	}
	return nil
}

// decodePlain is the fast path: it decodes a row in the plain form the
// Writer writes, and reports false for any other row, which the general
// path then decodes (filling every field again).
//
// It walks the row once, cell by cell in file order, as rowdecode.SplitCSVLine cuts
// a row without quotes (at every comma): each cell is read by its
// column's kind up to the comma that ends it, so each byte is looked at
// once. Columns the row or the file lacks then read as empty cells.
func (d *lineDecoder) decodePlain(row []byte, rec *Record) bool {
	if !d.plain || bytes.IndexByte(row, '"') >= 0 {
		return false
	}
	d.bind(rec)
	f := &d.fill
	cells := 0
	for pos := 0; cells < len(d.ops); cells++ {
		b := row[pos:]
		n := 0
		switch op := d.ops[cells]; op {
		case opSkip:
			n = cellLen(b)
		case opText:
			n = cellLen(b)
			*f.texts[cells] = d.recent(d.columnAt[cells], b, n)
		case opFlag:
			n = cellLen(b)
			*f.flags[cells] = n == 1 && b[0] == '1'
		case opDecimal, opCheckDecimal:
			m, scale, w, ok := plainDecimal(b)
			if !ok {
				return false
			}
			if n = w; f.nums[cells] != nil {
				*f.nums[cells] = decimalValue(m, scale)
			}
		case opCount, opCheckCount, opOptCount, opCheckOptCount:
			v, w, ok := plainCount(b)
			if !ok || (w == 0 && (op == opCount || op == opCheckCount)) {
				return false
			}
			if n = w; f.ints[cells] != nil {
				*f.ints[cells] = v
			}
		default: // a kind the fast path does not know
			return false
		}
		if pos += n; pos == len(row) {
			cells++
			break // the last cell
		}
		pos++ // the comma; past the last column the table reads, the cells after it are not read
	}
	if cells < requiredColumns {
		return false // decodeFields rejects it
	}
	for _, i := range d.columnAt[cells:] {
		if i >= 0 && !d.emptyCell(i, rec) {
			return false
		}
	}
	for _, i := range d.absent {
		if !d.emptyCell(i, rec) {
			return false
		}
	}
	return true
}

// markReadable makes d a decoder of rows known to read (readableDecoder).
func (d *lineDecoder) markReadable() {
	d.readable = true
	for j, i := range d.columnAt {
		if i >= 0 && d.keep[i] {
			d.kept = append(d.kept, j)
		}
	}
}

// decodeReadable is decodePlain for a row known to read without error
// (readable): it reads the kept cells as decodePlain does, and skips the
// cells between them eight bytes at a time (skipCells), unchecked. It
// reports false, for the general path, when a kept cell is not plain.
func (d *lineDecoder) decodeReadable(row []byte, rec *Record) bool {
	if bytes.IndexByte(row, '"') >= 0 {
		return false
	}
	pos, cell := 0, 0 // pos is where cell starts
	k := 0
	for ; k < len(d.kept); k++ {
		j := d.kept[k]
		if j > cell {
			n := skipCells(row[pos:], j-cell)
			if n < 0 {
				break // the row ends before cell j
			}
			pos, cell = pos+n, j
		}
		b := row[pos:]
		n := 0
		switch i := d.columnAt[j]; table[i].kind {
		case kindText:
			n = cellLen(b)
			*table[i].field(rec).(*string) = d.recent(i, b, n)
		case kindFlag:
			n = cellLen(b)
			*table[i].field(rec).(*bool) = n == 1 && b[0] == '1'
		case kindDecimal:
			m, scale, w, ok := plainDecimal(b)
			if !ok {
				return false
			}
			n = w
			*table[i].field(rec).(*float64) = decimalValue(m, scale)
		case kindCount, kindOptionalCount:
			v, w, ok := plainCount(b)
			if !ok || (w == 0 && table[i].kind == kindCount) {
				return false
			}
			n = w
			*table[i].field(rec).(*int) = v
		default:
			return false
		}
		if pos += n; pos == len(row) {
			k++
			break // the last cell
		}
		pos, cell = pos+1, j+1
	}
	for _, j := range d.kept[k:] {
		if !d.emptyCell(d.columnAt[j], rec) {
			return false
		}
	}
	for _, i := range d.absent {
		if !d.emptyCell(i, rec) {
			return false
		}
	}
	return true
}

// skipCells returns the offset in b just past its k-th comma (k > 0), or
// −1 when b holds fewer: eight bytes at a time, a comma found by the
// exact test for a zero byte (no false match, whatever the bytes).
func skipCells(b []byte, k int) int {
	const ones, high, low7 = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	pos := 0
	for ; pos+8 <= len(b); pos += 8 {
		v := binary.LittleEndian.Uint64(b[pos:]) ^ (ones * ',')
		// The high bit of each byte of v that is zero: a comma.
		z := ^((v&low7 + low7) | v | low7)
		c := bits.OnesCount64(z)
		if c < k {
			k -= c
			continue
		}
		for ; k > 1; k-- {
			z &= z - 1
		}
		return pos + bits.TrailingZeros64(z)/8 + 1
	}
	for ; pos < len(b); pos++ {
		if b[pos] == ',' {
			if k--; k == 0 {
				return pos + 1
			}
		}
	}
	return -1
}

// emptyCell decodes an empty cell for table column i, for a column the
// file or the row lacks; false when the general path must (a count, which
// is never empty).
func (d *lineDecoder) emptyCell(i int, rec *Record) bool {
	c := &table[i]
	if !d.keep[i] {
		return c.kind != kindCount && c.kind != kindUnknown
	}
	switch c.kind {
	case kindText:
		*c.field(rec).(*string) = ""
	case kindFlag:
		*c.field(rec).(*bool) = false
	case kindOptionalCount:
		*c.field(rec).(*int) = None
	case kindDecimal:
		*c.field(rec).(*float64) = None
	default:
		return false
	}
	return true
}

// cellLen is the length of the cell at the start of b: up to its comma.
// Eight bytes at a time, not bytes.IndexByte: most cells are a few bytes.
func cellLen(b []byte) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; n+8 <= len(b); n += 8 {
		v := binary.LittleEndian.Uint64(b[n:]) ^ (ones * ',')
		// The lowest high bit set is the first zero byte of v, the
		// first comma: a borrow only runs up from a zero byte.
		if z := (v - ones) &^ v & high; z != 0 {
			return n + bits.TrailingZeros64(z)/8
		}
	}
	for n < len(b) && b[n] != ',' {
		n++
	}
	return n
}

// internSlots is how many text cells of a column recent keeps at hand.
const internSlots = 8

// seenText is a text cell recent keeps at hand: its string, its length
// and its first eight bytes (head), which compare at once.
type seenText struct {
	s    string
	n    int
	head uint64
}

// intern returns cell as a string, the same string for the same text.
// recent is intern for the cell of table column i at the start of b, n
// bytes long, which mostly holds one of a few texts (a run id, groups, a
// fleet's workers, the retry owner's decisions): each text has its slot
// among the column's internSlots, by its length and first bytes, and one
// found there costs no look-up and, up to eight bytes, no comparison of
// strings.
func (d *lineDecoder) recent(i int, b []byte, n int) string {
	if n == 0 {
		return ""
	}
	var head uint64
	if len(b) >= 8 {
		head = binary.LittleEndian.Uint64(b)
		if n < 8 {
			head &= 1<<(8*n) - 1
		}
	} else {
		for k := n - 1; k >= 0; k-- {
			head = head<<8 | uint64(b[k])
		}
	}
	slot := &d.seen[i][(uint64(n)+head*0x9e3779b97f4a7c15)>>61%internSlots]
	if slot.n != n || slot.head != head || (n > 8 && slot.s[8:] != string(b[8:n])) {
		*slot = seenText{s: d.intern(b[:n]), n: n, head: head}
	}
	return slot.s
}

func (d *lineDecoder) intern(cell []byte) string {
	if len(cell) == 0 {
		return ""
	}
	if s, ok := d.texts[string(cell)]; ok { // no allocation: the compiler's m[string(b)]
		return s
	}
	s := string(cell)
	if len(d.texts) < maxInterned {
		d.texts[s] = s
	}
	return s
}

// plainCount reads the integer cell at the start of b: n is its length,
// up to the comma that ends it. An empty cell is None; a cell of 1 to 18
// digits is the value parseCount (strconv.Atoi) reads from it, since 18
// digits cannot overflow an int. Anything else — a sign, a space, more
// digits — is not plain (ok false).
func plainCount(b []byte) (v, n int, ok bool) {
	for n < len(b) && b[n]-'0' <= 9 {
		v = v*10 + int(b[n]-'0')
		n++
	}
	switch {
	case n < len(b) && b[n] != ',', n > 18:
		return 0, 0, false
	case n == 0:
		return None, 0, true
	}
	return v, n, true
}

// pow10 holds the powers of ten a plain decimal divides by, all exact in a
// float64.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// plainDecimal reads the number cell at the start of b: n is its length,
// up to the comma that ends it. A plain cell is empty, or digits with at
// most one point between digits ("40", "40.125"), 15 digits at most; they
// are m, point removed, and scale is how many follow the point (-1 for an
// empty cell). Anything else is not plain (ok false). decimalValue makes
// the number, only for the cells kept: a division is not free.
func plainDecimal(b []byte) (m uint64, scale, n int, ok bool) {
	for n < len(b) && b[n]-'0' <= 9 {
		m = m*10 + uint64(b[n]-'0')
		n++
	}
	digits := n
	if n < len(b) && b[n] == '.' {
		point := n
		for n++; n < len(b) && b[n]-'0' <= 9; n++ {
			m = m*10 + uint64(b[n]-'0')
		}
		if point == 0 || n == point+1 { // ".5", "5."
			return 0, 0, 0, false
		}
		scale, digits = n-1-point, n-1
	}
	switch {
	case n < len(b) && b[n] != ',':
		return 0, 0, 0, false
	case n == 0:
		return 0, -1, 0, true
	}
	return m, scale, n, digits <= 15
}

// decimalValue is the value of a plain decimal cell: None when empty
// (scale -1).
//
// It is exactly what strconv.ParseFloat returns for the cell. m < 10^15 <
// 2^53 is exact in a float64, and so is 10^scale (scale ≤ 15); IEEE 754
// division is correctly rounded, so the one division gives the float64
// nearest to the decimal m / 10^scale — which is what ParseFloat returns
// for any input, by its definition. The value is below 10^15 (maxNumber),
// so the general decoder accepts the cell too.
func decimalValue(m uint64, scale int) float64 {
	if scale < 0 {
		return None
	}
	return float64(m) / pow10[scale]
}
