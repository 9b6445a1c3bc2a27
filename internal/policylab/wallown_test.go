package policylab

import (
	"fmt"
	"testing"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// TestWallTargetOwnsAsBefore: a wall-clock client's target, made by
// campaign.Target.Own, is the one the lab's hand copy of the emulation
// fields made, for every built-in.
func TestWallTargetOwnsAsBefore(t *testing.T) {
	t.Parallel()
	p := &admission.Policy{}
	for _, b := range policy.Builtins {
		spec := mustSpec(t, b.Name)
		var hand, own campaign.Target
		hand.Owner, hand.PolicyName, hand.Fallback = p, spec.Name, spec.Fallback
		hand.AppAttempts, hand.AppDelay, hand.MarkSDKRetries = spec.AppAttempts, spec.AppDelay, spec.SDK
		own.Own(spec, p)
		if fmt.Sprintf("%+v", hand) != fmt.Sprintf("%+v", own) {
			t.Errorf("%s: Own made %+v, the hand copy %+v", b.Name, own, hand)
		}
	}
}
