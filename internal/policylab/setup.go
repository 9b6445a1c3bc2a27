package policylab

// Setup describes a lab run for its written outputs.
type Setup struct {
	Requests int    // requests in the plan
	Target   string // e.g. "a fresh embedded simulator each (seed 1)"
	Budget   string // the reference budget, e.g. "30 s"
}
