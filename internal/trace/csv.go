package trace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/rowdecode"
	"github.com/ptuprobe/ptuprobe/results"
)

// Columns of the CSV formats, as their headers name them (matched
// without regard to case or surrounding spaces).
var (
	azureColumns    = []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}
	burstGPTColumns = []string{"Timestamp", "Request tokens", "Response tokens"}
)

const burstGPTModel = "Model"

// csvLayout is where a CSV format's columns sit in a file: the time,
// the prompt and output counts, and the model (-1 when absent).
type csvLayout struct {
	format           string
	at, in, out, mdl int
	fields           int // the most of the positions, plus one: a row needs as many cells
	seconds          bool
}

// detect says what a file is from its first line (a CSV header, or the
// first JSON object), checked against the format asked for.
func detect(name string, first []byte, format string) (string, csvLayout, error) {
	if t := strings.TrimSpace(string(first)); strings.HasPrefix(t, "{") {
		if format != FormatAuto && format != FormatMooncake {
			return "", csvLayout{}, &Error{File: name, Reason: fmt.Sprintf("holds JSON lines, not a %s CSV", format)}
		}
		if err := mooncakeKeys(first); err != nil {
			return "", csvLayout{}, &Error{File: name, Line: 0, Reason: "not a Mooncake trace: " + err.Error()}
		}
		return FormatMooncake, csvLayout{}, nil
	}
	header, err := rowdecode.SplitCSVLine(nil, first)
	if err != nil {
		return "", csvLayout{}, &Error{File: name, Reason: "its first line is neither a CSV header nor a JSON object: " + err.Error()}
	}
	if results.IsResultsHeader(header) && (format == FormatAuto || format == FormatPtuprobe) {
		return FormatPtuprobe, csvLayout{}, nil
	}
	az, azOK := layoutOf(FormatAzure, header, azureColumns)
	bg, bgOK := layoutOf(FormatBurstGPT, header, burstGPTColumns)
	switch format {
	case FormatAuto:
		switch {
		case azOK && bgOK:
			return "", csvLayout{}, &Error{File: name, Reason: "its header has the columns of both the Azure and the BurstGPT traces: say which with --replay-format"}
		case azOK:
			return FormatAzure, az, nil
		case bgOK:
			return FormatBurstGPT, bg, nil
		}
		return "", csvLayout{}, &Error{File: name, Reason: fmt.Sprintf("not a trace this reads: its header (%s) is not a ptuprobe results header, nor has the Azure trace's columns (%s) or BurstGPT's (%s)",
			clip(strings.Join(header, ",")), strings.Join(azureColumns, ","), strings.Join(burstGPTColumns, ","))}
	case FormatAzure:
		if azOK {
			return FormatAzure, az, nil
		}
		return "", csvLayout{}, missing(name, FormatAzure, header, azureColumns)
	case FormatBurstGPT:
		if bgOK {
			return FormatBurstGPT, bg, nil
		}
		return "", csvLayout{}, missing(name, FormatBurstGPT, header, burstGPTColumns)
	case FormatPtuprobe:
		return "", csvLayout{}, &Error{File: name, Reason: "not a ptuprobe results file: its header does not start run_id,shape,group,seq,attempt,…"}
	}
	return "", csvLayout{}, &Error{File: name, Reason: "not JSON lines: a Mooncake trace is one JSON object a line"}
}

// layoutOf finds want (and BurstGPT's model) in header.
func layoutOf(format string, header, want []string) (csvLayout, bool) {
	pos := make([]int, len(want))
	for i, w := range want {
		pos[i] = find(header, w)
		if pos[i] < 0 {
			return csvLayout{}, false
		}
	}
	l := csvLayout{format: format, at: pos[0], in: pos[1], out: pos[2], mdl: -1, seconds: format == FormatBurstGPT}
	if format == FormatBurstGPT {
		l.mdl = find(header, burstGPTModel)
	}
	l.fields = max(l.at, l.in, l.out, l.mdl) + 1
	return l, true
}

func find(header []string, name string) int {
	for i, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

func missing(name, format string, header, want []string) error {
	var gone []string
	for _, w := range want {
		if find(header, w) < 0 {
			gone = append(gone, w)
		}
	}
	return &Error{File: name, Reason: fmt.Sprintf("not a %s trace: its header lacks %s", format, strings.Join(gone, ", "))}
}

// readCSV reads the rows after the header.
func readCSV(ctx context.Context, ls *lines, l csvLayout, b *builder) error {
	var cells []string
	models := map[string]string{} // one string per model name
	for {
		if ls.line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := ls.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		cells, err = rowdecode.SplitCSVLine(cells[:0], line)
		if err != nil {
			return badRow("%v", err)
		}
		if len(cells) < l.fields {
			return badRow("%d cells, want at least %d", len(cells), l.fields)
		}
		var at int64
		if l.seconds {
			at, err = seconds(cells[l.at], "Timestamp", 1)
		} else {
			at, err = datetime(cells[l.at])
		}
		if err != nil {
			return err
		}
		in, err := count(cells[l.in], header(l, l.in))
		if err != nil {
			return err
		}
		out, err := count(cells[l.out], header(l, l.out))
		if err != nil {
			return err
		}
		model := ""
		if l.mdl >= 0 {
			model = intern(models, strings.TrimSpace(cells[l.mdl]))
		}
		if err := b.add(at, in, out, nil, model); err != nil {
			return err
		}
	}
}

// header names a column of a CSV format in an error.
func header(l csvLayout, pos int) string {
	cols := azureColumns
	if l.format == FormatBurstGPT {
		cols = burstGPTColumns
	}
	if pos == l.in {
		return cols[1]
	}
	return cols[2]
}

// intern keeps one copy of each model name (a trace has a handful), at
// most 64 bytes of it.
func intern(m map[string]string, s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	if v, ok := m[s]; ok {
		return v
	}
	if len(m) < 1024 {
		m[s] = strings.Clone(s)
	}
	return m[s]
}

// maxSeconds bounds a timestamp in seconds (about 3,000 years): its ns
// fit an int64 with room for the difference of two.
const maxSeconds = 1e11

// seconds reads a number of units (1 for seconds, 1e-3 for ms) as ns.
func seconds(cell, what string, unit float64) (int64, error) {
	s := strings.TrimSpace(cell)
	v, err := parseFloat(s)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, badRow("%s %q is not a number", what, clip(s))
	}
	if v*unit > maxSeconds || v*unit < -maxSeconds {
		return 0, badRow("%s %q is out of range", what, clip(s))
	}
	return int64(math.Round(v * unit * 1e9)), nil
}

// parseFloat is strconv.ParseFloat of a plain decimal: no hex, no
// underscores, no inf or nan spelled out.
func parseFloat(s string) (float64, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseFloat(s, 64)
}

// Layouts of an Azure trace's timestamp, after its fraction of a second
// (which time.Parse reads wherever the seconds end) and with a `T`
// written as a space.
var datetimeLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05Z07",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 MST",
}

// datetime reads an Azure trace's TIMESTAMP as ns since the epoch.
func datetime(cell string) (int64, error) {
	s := strings.TrimSpace(cell)
	if len(s) > 10 && s[10] == 'T' {
		s = s[:10] + " " + s[11:]
	}
	for _, l := range datetimeLayouts {
		t, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		if y := t.Year(); y < 1970 || y > 2200 {
			return 0, badRow("TIMESTAMP %q is out of range (1970 to 2200)", clip(cell))
		}
		return t.UnixNano(), nil
	}
	return 0, badRow("TIMESTAMP %q is not a date and time like 2023-11-16 18:15:46.0240490", clip(cell))
}

// mooncakeRow is one line of a Mooncake trace.
type mooncakeRow struct {
	Timestamp    *json.Number `json:"timestamp"`
	InputLength  *json.Number `json:"input_length"`
	OutputLength *json.Number `json:"output_length"`
	HashIDs      []int64      `json:"hash_ids"`
}

// mooncakeKeys checks that a line is a JSON object with a Mooncake row's
// keys.
func mooncakeKeys(line []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("its first line is not a JSON object")
	}
	var gone []string
	for _, k := range []string{"timestamp", "input_length", "output_length"} {
		if _, ok := m[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("its first object lacks %s", strings.Join(gone, ", "))
	}
	return nil
}

// readMooncake reads every line, the first (already read) included.
func readMooncake(ctx context.Context, ls *lines, first []byte, b *builder) error {
	line := first
	for {
		if ls.line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if len(strings.TrimSpace(string(line))) > 0 {
			if err := mooncakeLine(line, b); err != nil {
				return err
			}
		}
		var err error
		line, err = ls.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func mooncakeLine(line []byte, b *builder) error {
	var r mooncakeRow
	if err := json.Unmarshal(line, &r); err != nil {
		return badRow("not a JSON object of a Mooncake row: %s", clip(err.Error()))
	}
	if r.Timestamp == nil || r.InputLength == nil || r.OutputLength == nil {
		return badRow("lacks timestamp, input_length or output_length")
	}
	at, err := seconds(string(*r.Timestamp), "timestamp", 1e-3)
	if err != nil {
		return err
	}
	in, err := count(string(*r.InputLength), "input_length")
	if err != nil {
		return err
	}
	out, err := count(string(*r.OutputLength), "output_length")
	if err != nil {
		return err
	}
	ids := make([]int, 0, len(r.HashIDs))
	for _, id := range r.HashIDs {
		if id < 0 {
			return badRow("hash id %d is negative", id)
		}
		ids = append(ids, int(id))
	}
	return b.add(at, in, out, ids, "")
}
