package campaign

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

var updateRows = flag.Bool("update-rows", false, "rewrite testdata/rows-*.csv from this tree's runs")

// TestRowsByteIdentical: the results file of a run on the in-memory
// simulator in a synctest bubble (its clock, and so every timing, the
// same from run to run) holds the rows of testdata/rows-NAME.csv byte for
// byte, sorted (the file's order is the order the requests ended in):
// streamed and not, without a retry owner and with one that retries 429s,
// past the simulator's capacity. The golden files were written by the
// tree in which a request held its first Record for its whole life
// (f7287d6); a row is now built when its attempt ends (client.Head), and
// must come out the same.
func TestRowsByteIdentical(t *testing.T) {
	t.Parallel()
	owner := func() *admission.Policy {
		return &admission.Policy{MaxAttempts: 3, Budget: 10 * time.Second, Jitter: 0}
	}
	for _, c := range []struct {
		name     string
		stream   bool
		owner    *admission.Policy
		inFlight int // 1 with an owner: two retries due at one instant would race for the simulator's capacity
	}{
		{"once", false, nil, 64},
		{"once-stream", true, nil, 64},
		{"owned", false, owner(), 1},
		{"owned-stream", true, owner(), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			plan, err := SchedulePlan(schedule.Config{Phases: []schedule.Phase{{Name: "c", Duration: 4 * time.Second, From: 12, To: 12}}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := sim.DefaultConfig()
			if c.owner != nil {
				cfg.PTU = 15 // refuses requests sent one at a time too
			}
			job := Job{
				Plans:  []Plan{plan},
				Output: filepath.Join(t.TempDir(), "results.csv"),
				Target: Target{Spec: client.Spec{PromptTokens: 1000, MaxTokens: 100, Timeout: 30 * time.Second, Stream: c.stream},
					Sim: cfg, InMemory: true, Owner: c.owner, PolicyName: "p"},
				Options: Options{RunID: "golden", MaxInFlight: c.inFlight, MaxRequests: 1000, Wait: sleep.Until},
			}
			synctest.Test(t, func(t *testing.T) {
				if _, err := Run(t.Context(), job); err != nil {
					t.Fatal(err)
				}
			})
			got, err := os.ReadFile(job.Output)
			if err != nil {
				t.Fatal(err)
			}
			got = sortedRows(got)
			golden := filepath.Join("testdata", "rows-"+c.name+".csv")
			if *updateRows {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/campaign -run TestRowsByteIdentical -update-rows writes it)", err)
			}
			if !bytes.Equal(got, want) {
				gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := range min(len(gl), len(wl)) {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Fatalf("line %d differs:\n got %s\nwant %s", i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%d lines, want %d", len(gl), len(wl))
			}
		})
	}
}

// sortedRows is a results file with its header first and its rows
// sorted, byte for byte otherwise.
func sortedRows(file []byte) []byte {
	lines := bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n"))
	slices.SortFunc(lines[1:], bytes.Compare)
	return append(bytes.Join(lines, []byte("\n")), '\n')
}
