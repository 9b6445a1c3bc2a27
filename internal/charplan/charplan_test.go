package charplan

import (
	"reflect"
	"testing"

	"github.com/ptuprobe/ptuprobe/schedule"
)

// The help text's specs and the phases are one plan.
func TestPhaseSpecsParseToPhases(t *testing.T) {
	t.Parallel()
	var got []schedule.Phase
	for _, s := range PhaseSpecs() {
		p, err := schedule.ParsePhase(s)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if !reflect.DeepEqual(got, Phases()) {
		t.Fatalf("PhaseSpecs parse to %+v, want %+v", got, Phases())
	}
	if err := Burst().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (schedule.Config{Phases: Phases()}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestProbeUnitsFor: the probe cuts the job's request into ProbeSends ÷
// the first wave's admissions, within 1–ProbeUnits; whole requests after
// a wave admitted whole, or none counted.
func TestProbeUnitsFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ first, size, want int }{
		{26, 40, 4}, {15, 40, 4}, {30, 40, 4}, {31, 40, 3}, {39, 40, 3}, {40, 40, 1}, {0, 40, 4}, {-1, 40, 1}, {57, 80, 2}, {100, 160, 1},
	} {
		if got := ProbeUnitsFor(c.first, c.size); got != c.want {
			t.Errorf("ProbeUnitsFor(%d, %d) = %d, want %d", c.first, c.size, got, c.want)
		}
	}
}
