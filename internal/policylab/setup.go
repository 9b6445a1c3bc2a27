package policylab

import "github.com/ptuprobe/ptuprobe/report"

// Setup describes a lab run for its written outputs.
type Setup struct {
	Requests int    // requests in the plan
	Target   string // e.g. "a fresh embedded simulator each (seed 1)"
	Budget   string // the reference budget, e.g. "30 s"
	// Command and Settings name the command and the flags given to it,
	// for report.html (report.SettingsSection); values that could name
	// the target are withheld by the caller.
	Command  string
	Settings []report.Setting
}
