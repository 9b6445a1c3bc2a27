package sim

import "time"

// Capacity is what the simulator sustains for requests of promptTokens
// and maxTokens from a fleet of keys clients (each its own key), in requests
// per second of model time, and the formula, in words:
//   - ptu: the bucket's drain D = PTU × TokensPerPTU / 60 weighted tokens
//     a second over a request's mean actual cost, prompt + OutputWeight ×
//     the mean completion (drawn uniformly from ⌈0.3 m⌉ to m tokens);
//   - gateway: the tightest ceiling: organizations × OrgRPS, keys ×
//     KeyRPS, and the token ceilings over the request's estimate
//     (prompt + max_tokens), which they charge;
//   - window: WindowLimit requests per WindowSize.
//
// It does not count the burst allowance a rested deployment spends once,
// so a short run's goodput can pass it. Each formula is its limiter's
// (limiter.go).
func (c Config) Capacity(promptTokens, maxTokens, keys int) (float64, string) {
	return newLimiter(c, time.Time{}, nil, &counters{}).capacity(promptTokens, maxTokens, keys)
}
