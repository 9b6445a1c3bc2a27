package calibrate

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
	"github.com/ptuprobe/ptuprobe/results"
)

// EvidenceColumns is the header of calibrate.csv.
var EvidenceColumns = []string{"step", "phase", "offered_rps", "sent", "admitted_rps", "count_429", "wait_p50_ms", "errors", "verdict"}

func num(v float64) string {
	if v < 0 {
		return ""
	}
	return strconv.FormatFloat(float64(int64(v*1000+0.5))/1000, 'f', -1, 64)
}

// WriteCSV writes the evidence table as CSV, then a final row with the knee.
func (r Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(EvidenceColumns)
	for _, p := range r.Probes {
		cw.Write([]string{strconv.Itoa(p.Step), p.Phase, num(p.Offered), strconv.Itoa(p.Sent), num(p.Admitted),
			strconv.Itoa(p.N429), num(p.WaitP50), strconv.Itoa(p.Errors), p.Verdict})
	}
	verdict := ""
	if r.Interrupted {
		verdict = VerdictInterrupted
	}
	cw.Write([]string{"", "knee", num(r.Knee), "", "", "", "", "", verdict})
	cw.Flush()
	return cw.Error()
}

// WriteTable prints the evidence table and the knee for a terminal.
func (r Result) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%4s  %-6s  %11s  %6s  %12s  %5s  %12s  %6s  %s\n", "step", "phase", "offered/s", "sent", "admitted/s", "429s", "p50 wait ms", "errors", "verdict")
	for _, p := range r.Probes {
		p50 := "-"
		if p.WaitP50 != results.None {
			p50 = num(p.WaitP50)
		}
		fmt.Fprintf(w, "%4d  %-6s  %11s  %6d  %12s  %5d  %12s  %6d  %s\n", p.Step, p.Phase, num(p.Offered), p.Sent, num(p.Admitted), p.N429, p50, p.Errors, p.Verdict)
	}
	switch {
	case r.Interrupted && r.Knee == 0:
		fmt.Fprintf(w, "knee: not found: interrupted after %d probes, before any rate was admitted\n", len(r.Probes))
	case r.Interrupted:
		fmt.Fprintf(w, "knee: interrupted after %d probes: %s/s was admitted without 429s so far\n", len(r.Probes), num(r.Knee))
	case r.Knee == 0:
		fmt.Fprintf(w, "knee: none found: even the lowest rate, %s/s, was not admitted\n", num(r.Ceiling))
	case r.Ceiling == 0:
		fmt.Fprintf(w, "knee: at least %s/s: every rate up to the highest was admitted\n", num(r.Knee))
	default:
		fmt.Fprintf(w, "knee: %s/s admitted without 429s (%s/s was not)\n", num(r.Knee), num(r.Ceiling))
	}
}

// WriteFile writes the evidence table to path; a failed write never
// leaves half a table under the name.
func (r Result) WriteFile(path string) error {
	return atomicfile.Write(path, r.WriteCSV)
}
