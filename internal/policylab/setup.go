package policylab

import "github.com/ptuprobe/ptuprobe/report"

// Setup is what report.html says about the command behind a sweep; the
// sweep itself carries everything measured.
type Setup struct {
	// Command and Settings name the command and the flags given to it
	// (report.SettingsSection); values that could name the target are
	// withheld by the caller.
	Command  string
	Settings []report.Setting
}
