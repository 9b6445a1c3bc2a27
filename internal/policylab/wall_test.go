package policylab

import (
	"sync"
	"testing"
)

// TestWallClientsShareTheirJitterSafely: on the wall clock a client's
// requests run at once, each drawing its jitter from the client's
// source: the source is safe to share (under -race, an unlocked source
// failed cmd's TestPoliciesCoordinated), and a client draws the numbers
// of its seed, as the virtual clock's run of it does.
func TestWallClientsShareTheirJitterSafely(t *testing.T) {
	t.Parallel()
	v := virtualRun{Spec: mustSpec(t, "honor"), Clients: 2, Seed: 7}
	env := v.wallEnv(1, nil)
	var wg sync.WaitGroup
	got := make([]float64, 64)
	for k := range got {
		wg.Go(func() { got[k] = env.Rand() })
	}
	wg.Wait()
	want, seen := seededRand(v.clientSeed(1)), map[float64]int{}
	for range got {
		seen[want()]++
	}
	for _, x := range got {
		if seen[x] == 0 {
			t.Fatalf("client 1 drew %v, not one of its seed's first %d numbers", x, len(got))
		}
		seen[x]--
	}
}
