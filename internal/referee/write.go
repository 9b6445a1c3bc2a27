package referee

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/report"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Title is the heading of referee.md and report.html.
const Title = "ptuprobe referee: the client's 429 handling"

// meaning says what each check counts, for the tables.
var meaning = map[string]string{
	CheckRequests:           "requests the simulator decided on (admitted or refused); those it refused before the model (401 for a wrong key, a wrong route) are not among them",
	CheckForeignKeys:        "requests refused for a key other than the throwaway one, or none (a stale real key, a key from a file)",
	CheckEarlyReturns:       "retries that came back before the wait their refusal advised",
	CheckOwners:             "retry owners told apart: declared (SDK, marked) and undeclared (a loop, a gateway); 2 also for a call whose retries interleave two schedules (one at once after one that waited, or a backoff starting over)",
	CheckAttemptsPerRequest: "attempts per call the client made",
	CheckHTTP429PerSuccess:  "429s per admitted request",
	CheckHerd:               "share of retries on time within " + num.Millis(float64(sim.HerdWindow.Milliseconds()), 0) + " of the client's median lateness after the deadline it honours: waits kept without jitter, which every call told one deadline keeps together",
	CheckOverBudget:         "retries that came back later than the budget after their refusal, early or not",
	CheckIncomplete:         "refusals nobody came back to, and requests still open at the end",
}

// status is a check's word in the tables.
func status(c Check) string {
	switch {
	case c.Expect == "":
		return "reported"
	case c.Pass:
		return "pass"
	}
	return "FAIL"
}

// Summary is the verdict's one line: PASS or FAIL, what failed, and the
// command's end.
func Summary(v Verdict) string {
	var failed []string
	for _, c := range v.Checks {
		if !c.Pass {
			failed = append(failed, c.Name)
		}
	}
	end := fmt.Sprintf("the command exited %d after %s s", v.CommandExit, num.Decimal(v.Seconds, 1))
	switch {
	case v.Interrupted:
		end = fmt.Sprintf("interrupted: the command's process group was ended after %s s, the checks hold what the simulator saw until then", num.Decimal(v.Seconds, 1))
	case v.TimedOut:
		end = fmt.Sprintf("the command did not finish in time: its process group was ended after %s s", num.Decimal(v.Seconds, 1))
	}
	if (v.Interrupted || v.TimedOut) && v.UnansweredPastBudget > 0 {
		end += fmt.Sprintf(" (%d refusals older than the budget unanswered: asleep past it, or given up)", v.UnansweredPastBudget)
	}
	word := "PASS"
	if !v.Pass {
		word = "FAIL"
	}
	if len(failed) > 0 {
		word += " (" + strings.Join(failed, ", ") + ")"
	}
	return fmt.Sprintf("%s: scenario %s, dialect %s; %s%s", word, v.Scenario, v.Dialect, end, unreached(v))
}

// PrintTable writes the verdict table and its summary line.
func PrintTable(w io.Writer, v Verdict) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %10s  %-8s %s\n", "check", "value", "expect", "")
	for _, c := range v.Checks {
		fmt.Fprintf(&b, "%-22s %10s  %-8s %s\n", c.Name, num.Decimal(c.Value, 3), c.Expect, status(c))
	}
	fmt.Fprintf(&b, "\n%s\n", Summary(v))
	_, err := io.WriteString(w, b.String())
	return err
}

// write writes referee.json, referee.md and report.html into dir.
func write(dir string, v Verdict) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"referee.json", func(w io.Writer) error {
			e := json.NewEncoder(w)
			e.SetIndent("", "  ")
			return e.Encode(v)
		}},
		{"referee.md", func(w io.Writer) error { return writeMarkdown(w, v) }},
		{"report.html", func(w io.Writer) error { return report.WritePage(w, page(v)) }},
	}
	var written []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := atomicfile.Write(p, f.write); err != nil {
			return written, fmt.Errorf("write %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, nil
}

func writeMarkdown(w io.Writer, v Verdict) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n", Title, Summary(v))
	b.WriteString("| check | value | expect | verdict | what it counts |\n|---|---|---|---|---|\n")
	for _, c := range v.Checks {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Name, num.Decimal(c.Value, 3), c.Expect, status(c), meaning[c.Name])
	}
	fmt.Fprintf(&b, "\n%s\n", counts(v))
	_, err := io.WriteString(w, b.String())
	return err
}

// counts is the paragraph under the checks: what the simulator counted
// and what the command was not given.
func counts(v Verdict) string {
	s := fmt.Sprintf("The simulator admitted %d and refused %d requests (%d spilled over, %d rejected before the model); "+
		"it recognized %d retries: %d declared by an SDK, %d by their marker, %d undeclared; "+
		"at most %d retries of one call after a wait (one owner: %s), %d calls whose retries interleave two schedules.",
		v.Admitted, v.Refused, v.Spilled, v.Rejected, v.Retries, v.SDKRetries, v.MarkedRetries, v.UndeclaredRetries,
		v.MaxCallRetries, ownerBound(v.OwnerRetries), v.MixedCalls)
	if v.NeighbourBatches > 0 {
		s += fmt.Sprintf(" The neighbour submitted %d batches.", v.NeighbourBatches)
	}
	return s + fmt.Sprintf(" The command was not given %d credential-like variables of the environment.", v.WithheldEnv)
}

// ownerBound is --owner-retries in words.
func ownerBound(n int) string {
	if n <= 0 {
		return "no bound"
	}
	return fmt.Sprintf("up to %d", n)
}

// unreached says why requests is 0: nothing reached the simulator, or
// what did was refused before the model (its key, its route); "" when
// requests were decided on.
func unreached(v Verdict) string {
	if v.Admitted+v.Refused > 0 {
		return ""
	}
	if v.Rejected == 0 {
		return "; no request reached the simulator (another dialect's routes, a base URL the client does not read, a cached go test)"
	}
	if v.ForeignKeys > 0 {
		return fmt.Sprintf("; %d requests reached the simulator and were refused before the model, %d of them for their key (401: a stale key, or none, in place of the throwaway one: foreign_keys)", v.Rejected, v.ForeignKeys)
	}
	return fmt.Sprintf("; %d requests reached the simulator and were refused before the model (a route or a body it does not serve: a 400 or 404)", v.Rejected)
}

// page is report.html: the summary, then the checks.
func page(v Verdict) *report.Page {
	t := &report.Table{ID: "checks-table", Head: []report.Text{report.Plain("check"), report.Plain("value"), report.Plain("expect"), report.Plain("verdict"), report.Plain("what it counts")}}
	for _, c := range v.Checks {
		t.Rows = append(t.Rows, []report.Text{report.Code(c.Name), report.Plain(num.Decimal(c.Value, 3)), report.Plain(c.Expect), report.Plain(status(c)), report.Plain(meaning[c.Name])})
	}
	return &report.Page{
		Title:  Title,
		Lead:   report.Plain(Summary(v) + "."),
		Footer: report.PublishedFooter(),
		Sections: []report.Section{{ID: "checks", Heading: "Checks", Blocks: []report.Block{
			{Table: t}, {Para: report.Plain(counts(v))},
		}}},
	}
}
