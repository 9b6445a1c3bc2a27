package campaign

import (
	"bytes"
	"encoding/csv"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestKneeMatchesSimulatorCapacity calibrates against the embedded
// simulator, whose sustainable rate is known from its parameters: drain
// rate ÷ mean actual cost per request. The knee must lie within 15%. It
// runs in a synctest bubble over an in-memory network: the simulator, the
// client and the engine share the fake clock, so minutes of probing take
// milliseconds and every timing is exact.
//
// It is calibrate's claim, tested here: campaign's test binary links
// calibrate, the client and the simulator already, where calibrate's own
// would link the client, the simulator and net/http for this one test
// (issue 39; calibrate's other tests send to fakes of dispatch.Sender).
func TestKneeMatchesSimulatorCapacity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := sim.DefaultConfig()
		cfg.PTU = 50
		cfg.BurstPct = 0 // no burst allowance: capacity is the drain alone
		s, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ln := memnet.Listen()
		srv := &http.Server{Handler: s}
		go srv.Serve(ln)
		defer srv.Close()
		tg, err := client.New(client.Config{API: client.APIAzure, Endpoint: "http://sim.invalid", Deployment: cfg.Deployment,
			KeyHeader: "api-key", Key: "test", PromptTokens: 1000, MaxTokens: 100, Timeout: 10 * time.Second, MaxConns: 64,
			DialContext: ln.DialContext})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()

		// The prompt's size as the simulator counts it, from one request.
		one := results.Blank()
		tg.Send(t.Context(), one, time.Now(), t.Context(), func(r *results.Record) { one = *r })
		if one.Status != 200 || one.PromptTokens <= 0 {
			t.Fatalf("probe request: %+v", one)
		}
		// Completion tokens are drawn uniformly between 30% and 100% of the
		// maximum: a mean of 65%.
		meanCost := float64(one.PromptTokens) + cfg.OutputWeight*0.65*100
		want := cfg.DrainTokensPerSecond() / meanCost
		time.Sleep(time.Second) // let that request's cost drain

		var buf bytes.Buffer
		w, _ := results.NewWriter(&buf)
		res, err := calibrate.Run(t.Context(), calibrate.Config{
			MinRate: want / 6.3, MaxRate: want * 4, Factor: 2, ProbeDuration: 30 * time.Second, Depth: 4,
			Cooldown: 5 * time.Second, MaxInFlight: 128, RunID: "cal", Group: "calibrate", Wait: sleep.Until,
		}, sender{tg}, w)
		if err != nil {
			t.Fatal(err)
		}
		var table bytes.Buffer
		res.WriteTable(&table)
		t.Logf("analytical %.2f/s\n%s", want, table.String())
		if math.Abs(res.Knee-want)/want > 0.15 {
			t.Fatalf("knee %.2f/s, want within 15%% of %.2f/s", res.Knee, want)
		}
		if res.Ceiling <= res.Knee {
			t.Fatalf("ceiling %.2f not above knee %.2f", res.Ceiling, res.Knee)
		}
		if w.Rows() == 0 || !strings.Contains(buf.String(), "calibrate") {
			t.Fatal("probe rows were not written")
		}
		var csvOut bytes.Buffer
		if err := res.WriteCSV(&csvOut); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&csvOut).ReadAll()
		if err != nil || len(rows) != len(res.Probes)+2 || rows[0][0] != "step" || rows[len(rows)-1][1] != "knee" {
			t.Fatalf("calibrate.csv: %v %v", rows, err)
		}
	})
}
