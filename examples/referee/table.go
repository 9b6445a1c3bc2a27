package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The markers that hold the conformance table in docs/referee.md and
// README.md.
const (
	beginMarker = "<!-- referee-conformance:begin -->"
	endMarker   = "<!-- referee-conformance:end -->"
)

// verdict is what the table reads of a referee.json.
type verdict struct {
	Scenario, Dialect string
	Pass              bool
	TimedOut          bool `json:"timed_out"`
	Checks            []struct {
		Name   string
		Value  float64
		Expect string
		Pass   bool
	}
}

// printTable prints one row per CLIENT VERSION REFEREE.JSON triple of
// args: the client, its version, the dialect, the scenario, the verdict
// and every check's value, marked ✗ when its expectation is breached.
func printTable(w io.Writer, args []string) error {
	if len(args) == 0 || len(args)%3 != 0 {
		return errors.New("-table: want CLIENT VERSION REFEREE.JSON, repeated")
	}
	var b strings.Builder
	for i := 0; i < len(args); i += 3 {
		raw, err := os.ReadFile(args[i+2])
		if err != nil {
			return err
		}
		var v verdict
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("%s: %w", args[i+2], err)
		}
		if i == 0 {
			b.WriteString("| client | version | dialect | scenario | verdict |")
			for _, c := range v.Checks {
				fmt.Fprintf(&b, " %s |", c.Name)
			}
			b.WriteString("\n|---|---|---|---|---|" + strings.Repeat("---:|", len(v.Checks)) + "\n")
		}
		word := "PASS"
		switch {
		case v.TimedOut:
			word = "FAIL (timed out)"
		case !v.Pass:
			word = "FAIL"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |", args[i], args[i+1], v.Dialect, v.Scenario, word)
		for _, c := range v.Checks {
			mark := ""
			if !c.Pass {
				mark = " ✗"
			}
			fmt.Fprintf(&b, " %s%s |", strconv.FormatFloat(c.Value, 'g', 4, 64), mark)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable replaces what is between the markers of each file with the
// table in tableFile.
func writeTable(tableFile string, files []string) error {
	table, err := os.ReadFile(tableFile)
	if err != nil {
		return err
	}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		before, _, after, err := cutMarkers(f, doc)
		if err != nil {
			return err
		}
		out := before + beginMarker + "\n" + string(table) + endMarker + after
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// verifyTable checks that each file's table has the verdicts of the one
// in tableFile: the same client, version, dialect, scenario and verdict,
// and the same checks breached, row by row. The counts are not compared:
// they vary from run to run (timing, jitter), the verdicts must not. A
// committed row that this run did not make (node was missing) is named,
// not failed.
func verifyTable(tableFile string, files []string) error {
	raw, err := os.ReadFile(tableFile)
	if err != nil {
		return err
	}
	got := verdictRows(string(raw))
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		_, table, _, err := cutMarkers(f, doc)
		if err != nil {
			return err
		}
		want := verdictRows(table)
		seen := map[string]bool{}
		for _, r := range got {
			seen[r] = true
		}
		committed := map[string]bool{}
		for _, r := range want {
			committed[r] = true
			if !seen[r] {
				fmt.Printf("%s: not graded in this run: %s\n", f, r)
			}
		}
		for _, r := range got {
			if !committed[r] {
				return fmt.Errorf("%s: its conformance table lacks %s (run examples/referee/run.sh --write)", f, r)
			}
		}
		fmt.Printf("%s: its table has this run's %d verdicts\n", f, len(got))
	}
	return nil
}

// verdictRows is each row of a markdown table reduced to its verdicts:
// the first five cells and, for each check, its name and whether it is
// marked ✗.
func verdictRows(table string) []string {
	var head []string
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if head == nil {
			head = cells
			continue
		}
		if len(cells) != len(head) || len(cells) < 5 {
			rows = append(rows, "malformed row: "+line)
			continue
		}
		r := strings.Join(cells[:5], " / ")
		for i := 5; i < len(cells); i++ {
			word := "pass"
			if strings.HasSuffix(cells[i], "✗") {
				word = "FAIL"
			}
			r += " / " + head[i] + " " + word
		}
		rows = append(rows, r)
	}
	return rows
}

// cutMarkers splits doc around its markers: what is before the begin
// marker, the table between them, and what follows from the end marker.
func cutMarkers(name string, doc []byte) (before, table, after string, err error) {
	b := bytes.Index(doc, []byte(beginMarker))
	e := bytes.Index(doc, []byte(endMarker))
	if b < 0 || e < b {
		return "", "", "", fmt.Errorf("%s: no %s … %s", name, beginMarker, endMarker)
	}
	return string(doc[:b]), strings.TrimPrefix(string(doc[b+len(beginMarker):e]), "\n"), string(doc[e+len(endMarker):]), nil
}
