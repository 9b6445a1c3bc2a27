package policylab

// What the tests read the lab by and the lab itself does not call.

// Holds is the claim coordination is measured against: half the 429s per
// success, no fewer successes, and no client starved.
func (c comparison) Holds() bool {
	return c.HalvesRefusals() && c.NoFewerSuccesses() && c.NoneStarved()
}

// CSVColumns is the header of policies.csv (a coordinated lab's adds
// client_success_pct_min, client_success_pct_max,
// client_spread_pts, coordinator_calls and fallbacks).
func CSVColumns() []string {
	names := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		names[i] = c.name
	}
	return names
}
