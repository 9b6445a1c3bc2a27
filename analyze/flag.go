package analyze

import (
	"fmt"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// Thresholds of the published flags.
const (
	// SparseBelow: a group with fewer usable waits is flagged sparse; its
	// tail percentiles rest on a handful of values.
	SparseBelow = 50
	// ImbalancedShare: when one group holds at least this share of all
	// usable waits, the Overall row mostly describes that group.
	ImbalancedShare = 0.8
)

// Flag names of the published flags.
const (
	FlagSparse     = "sparse"
	FlagImbalanced = "imbalanced"
)

// Flag is a caution attached to a group, or to Overall.
type Flag struct {
	Name   string `json:"flag"`
	Group  string `json:"group"`
	Detail string `json:"detail"`
}

func flagsFor(a *Analysis) []Flag {
	var flags []Flag
	for _, g := range append([]Group{a.Overall}, a.Groups...) {
		if n := g.Count(); n < SparseBelow {
			flags = append(flags, Flag{
				Name: FlagSparse, Group: g.Label,
				Detail: fmt.Sprintf("n = %d < %d usable waits", n, SparseBelow),
			})
		}
	}
	total := a.Overall.Count()
	if len(a.Groups) > 1 && total > 0 {
		for _, g := range a.Groups {
			share := float64(g.Count()) / float64(total)
			if share >= ImbalancedShare {
				flags = append(flags, Flag{
					Name: FlagImbalanced, Group: g.Label,
					Detail: fmt.Sprintf("%s%% of all usable waits ≥ %s%%", num.Decimal(100*share, 1), num.Decimal(100*ImbalancedShare, 1)),
				})
			}
		}
	}
	return flags
}
