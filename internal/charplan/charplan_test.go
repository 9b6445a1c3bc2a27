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
