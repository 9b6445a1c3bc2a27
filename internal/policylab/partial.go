package policylab

import "fmt"

// A lab interrupted (Ctrl-C) publishes the rows whose every repeat
// finished, and says so in every output: a policy that did not finish
// might have led its group, so a group with an unfinished cell
// recommends nothing (verdictGroup.Unfinished).

// Partial reports whether the sweep was cut short: some cell's runs did
// not all finish.
func (s Sweep) Partial() bool { return len(s.Unfinished) > 0 }

// PartialStatus is "partial: interrupted after N of M runs" for a partial
// sweep, "" for a complete one: policies.csv's partial column, and the
// terminal's first line.
func (s Sweep) PartialStatus() string {
	if !s.Partial() {
		return ""
	}
	return fmt.Sprintf("partial: interrupted after %d of %d runs", s.Completed, s.Runs)
}

// partialNote opens policies.md and report.html for a partial sweep ("" for
// a complete one).
func partialNote(s Sweep) string {
	if !s.Partial() {
		return ""
	}
	return fmt.Sprintf("Partial: interrupted after %d of %d runs. A row is a cell whose every repeat finished; "+
		"where a policy's runs did not all finish, nothing is recommended, since it might have led.", s.Completed, s.Runs)
}
