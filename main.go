// Command ptuprobe fires burst- and scheduled-shaped traffic at an HTTP
// target, records every response and every advised wait, and turns the
// records into sanitized percentile tables and ECDF charts.
package main

import (
	"os"

	"github.com/ptuprobe/ptuprobe/cmd"
)

func main() {
	os.Exit(cmd.Execute())
}
