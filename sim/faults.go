package sim

import (
	"fmt"
	"strings"
)

// Fault kinds (Config.Faults, ParseFaults). Each tests one way a client's
// advised-wait parsing or error handling can go wrong.
const (
	FaultHTTPDate = "http-date" // 429 whose retry-after is an HTTP-date, no retry-after-ms
	FaultMissing  = "missing"   // 429 without any retry header
	FaultGarbage  = "garbage"   // 429 with unparsable retry headers
	Fault503      = "503"       // 503 Service Unavailable
	FaultReset    = "reset"     // TCP connection closed with RST, no response
	FaultSlow     = "slow"      // normal answer after an extra SlowDelay
)

// AllFaults lists every fault kind, in a stable order.
func AllFaults() []string {
	return []string{FaultHTTPDate, FaultMissing, FaultGarbage, Fault503, FaultReset, FaultSlow}
}

func knownFault(s string) bool {
	for _, f := range AllFaults() {
		if s == f {
			return true
		}
	}
	return false
}

// maxFaultList bounds a fault list so a pathological argument
// cannot make the parser loop for long.
const maxFaultList = 256

// ParseFaults parses a comma-separated fault list ("http-date,503").
// Names are case-insensitive and trimmed; duplicates collapse; an empty
// list or an unknown name is an error naming it.
func ParseFaults(s string) ([]string, error) {
	if len(s) > maxFaultList {
		return nil, fmt.Errorf("fault list longer than %d characters", maxFaultList)
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		name := strings.ToLower(strings.TrimSpace(part))
		if name == "" {
			continue
		}
		if !knownFault(name) {
			return nil, fmt.Errorf("unknown fault %q (known: %s)", truncateForError(name), strings.Join(AllFaults(), ","))
		}
		dup := false
		for _, have := range out {
			dup = dup || have == name
		}
		if !dup {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty fault list (known: %s)", strings.Join(AllFaults(), ","))
	}
	return out, nil
}

func truncateForError(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// pickFault decides, with the server's seeded generator, whether this
// request gets a fault and which one. Called with s.mu held.
func (s *Server) pickFault() string {
	if s.cfg.FaultRate <= 0 {
		return ""
	}
	if s.rng.Float64() >= s.cfg.FaultRate {
		return ""
	}
	kinds := s.cfg.Faults
	if len(kinds) == 0 {
		kinds = AllFaults()
	}
	return kinds[s.rng.IntN(len(kinds))]
}
