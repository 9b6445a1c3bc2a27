package campaign

import (
	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/policy"
)

// Own makes p, built from spec, the target's retry owner, with what spec
// emulates derived from it: its name on every row, its redirect to the
// fallback, an application's loop around it (stacked) and SDK retry
// numbering.
func (t *Target) Own(spec policy.Spec, p *admission.Policy) {
	app := spec.Outer()
	t.Owner, t.PolicyName, t.Fallback = p, spec.Name, spec.Fallback
	t.AppAttempts, t.AppDelay, t.MarkSDKRetries = app.Calls, app.Delay, spec.SDK
}
