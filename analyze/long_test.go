package analyze

import (
	"flag"
	"os"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// long runs the tests' volume: the cases of many rows or many simulated
// runs that check a model or a bound again at other settings, beyond
// what `go test ./...` keeps (each such test keeps one case of each kind
// there), and the tests of files of several blocks at the blocks' own
// size. .ci/run runs them: go test ./analyze -long.
var long = flag.Bool("long", false, "also run the volume cases, and blocks of their own size (.ci/run's long stage)")

// testLineCap is the results files' line cap in this package's tests
// but under -long: a block holds the longest line, so the files of
// several blocks its tests read are some 14 times smaller than under
// results.MaxLine (issue 39: they were most of the package's CPU).
const testLineCap = 16 << 10

func TestMain(m *testing.M) {
	flag.Parse()
	if !*long {
		results.SetLineCapForTests(testLineCap)
	}
	testkit.LessGC() // files of many rows read and dropped: the collector was a tenth of the CPU
	os.Exit(m.Run())
}

// scaled is rows, the rows of some blocks of results.MaxLine's, scaled to
// as many blocks of the size the tests read (blockSize): the same number
// of blocks, rounded up.
func scaled(rows int) int {
	full := results.MaxLine + 64<<10
	return (rows*blockSize() + full - 1) / full
}
