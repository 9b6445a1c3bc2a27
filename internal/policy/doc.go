// Package policy is the one vocabulary of client retry policies: the
// named built-ins (none, honor, slots, pace, sre-throttle, …) in one
// list (Builtins: name, description and how each differs from honor),
// the parser of a --policy value (a built-in, or NAME=BASE,key=value,…),
// the fair caps a lab gives them, the traits a verdict reads (never a
// policy's name), the one build of an admission.Policy from a Spec — its
// per-client state (a Pace, its admission.Gates: a throttle, a retry
// quota, an adaptive rate), the Slots of a fleet, a Coordinator and a
// fallback included — and the one application loop stacked owners run
// around it (Outer).
//
// The advice is admission.Advice (Spec.Advice, Traits.Advice): one type
// from the --policy key advice=honor|ignore|floor to the Transport.
//
// # Adding an algorithm
//
// A new client-side algorithm is one file in admission (a type with the
// three methods of admission.Gate, its constructor and its default
// configuration) and one line in Builtins here:
//
//	{"my-gate", "honor, plus my gate: …", gates(gate(admission.NewMyGate, admission.DefaultMyGateConfig()))},
//
// Build gives each client its own Gate; the lab and --policy on the
// traffic commands then run it, its traits mark it as adding to the
// advice (Traits.Extras), and its name is in the help texts and the
// default sweep.
//
// The traffic commands (--policy on burst, schedule and characterize)
// and the policy lab (internal/policylab) both import it, so a policy
// named on either is the same retry owner; client imports it for Outer.
// It imports admission and nothing else of ptuprobe: it describes
// policies and builds owners; it runs no traffic.
package policy
