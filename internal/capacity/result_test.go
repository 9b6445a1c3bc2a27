package capacity

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
)

// TestJSONSLOIsNullWithoutOne: capacity.json writes a search with no SLO
// as "slo": null, as it writes every figure it does not have (a step's
// ttft_p99_ms), not as an empty string; with one, its --slo text.
func TestJSONSLOIsNullWithoutOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		slo  analyze.SLO
		want any
	}{
		{analyze.SLO{}, nil},
		{analyze.SLO{TTFT: 2 * time.Second}, "ttft=2s"},
	} {
		b, err := json.Marshal(Result{Config: Config{SLO: c.slo}})
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		got, ok := doc["slo"]
		if !ok || got != c.want {
			t.Errorf("SLO %+v: \"slo\" is %#v (present %v); want %#v", c.slo, got, ok, c.want)
		}
	}
}
