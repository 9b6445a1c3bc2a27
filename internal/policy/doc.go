// Package policy is the one vocabulary of client retry policies: the
// named built-ins (none, honor, slots, pace, sre-throttle, …), the parser
// of a --policy value (a built-in, or NAME=BASE,key=value,…), the fair
// caps a lab gives them, the traits a verdict reads (never a policy's
// name), and the one build of an admission.Policy from a Spec — its
// per-client state (a Pace, a throttle, a retry quota, an adaptive
// rate), the Slots of a fleet, a Coordinator and a fallback included.
//
// The traffic commands (--policy on burst, schedule and characterize)
// and the policy lab (internal/policylab) both import it, so a policy
// named on either is the same retry owner. It imports admission and
// nothing else of ptuprobe: it describes policies; it runs none.
package policy
