package cmd

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// TestVersionUnstamped: a binary built without -ldflags -X …/cmd.Version
// (go build, go run, go test) says it is dev.
func TestVersionUnstamped(t *testing.T) {
	t.Parallel()
	want := "ptuprobe dev (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, arg := range []string{"version", "--version"} {
		code, stdout, stderr := runCLI(context.Background(), arg)
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want %q", arg, code, stdout, stderr, want)
		}
	}
}

// TestVersionStamped: the version scripts/release.sh stamps is the one
// printed (release.sh checks it in the built binaries too). Not parallel:
// it sets the package's Version.
func TestVersionStamped(t *testing.T) {
	saved := Version
	t.Cleanup(func() { Version = saved })
	Version = "v1.2.3"
	for _, arg := range []string{"version", "--version"} {
		if code, stdout, _ := runCLI(context.Background(), arg); code != 0 || !strings.HasPrefix(stdout, "ptuprobe v1.2.3 (go") {
			t.Fatalf("%s: exit %d, stdout %q", arg, code, stdout)
		}
	}
}
