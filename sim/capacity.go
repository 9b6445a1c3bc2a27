package sim

import (
	"fmt"
	"strconv"
)

// Capacity is what the simulator sustains for requests of promptTokens
// and maxTokens from a fleet of keys clients (each its own key), in requests
// per second of model time, and the formula, in words:
//   - ptu: the bucket's drain D = PTU × TokensPerPTU / 60 weighted tokens
//     a second over a request's mean actual cost, prompt + OutputWeight ×
//     the mean completion (drawn uniformly from ⌈0.3 m⌉ to m tokens);
//   - gateway: the tightest ceiling: organizations × OrgRPS, keys ×
//     KeyRPS, and the token ceilings over the request's estimate (prompt
//   - max_tokens), which they charge;
//   - window: WindowLimit requests per WindowSize.
//
// It does not count the burst allowance a rested deployment spends once,
// so a short run's goodput can pass it.
func (c Config) Capacity(promptTokens, maxTokens, keys int) (float64, string) {
	lo, hi := completionRange(maxTokens)
	meanCompletion := float64(lo+hi) / 2
	switch c.Profile {
	case ProfileGateway:
		est := float64(promptTokens + maxTokens)
		rps := min(float64(c.GatewayOrgs*c.GatewayOrgRPS), float64(c.GatewayOrgs)*float64(c.GatewayOrgTPM)/60/est,
			float64(keys*c.GatewayKeyRPS), float64(keys)*float64(c.GatewayKeyTPM)/60/est)
		return rps, fmt.Sprintf("the gateway's tightest ceiling for %d keys: min(orgs × %d req/s, orgs × %d tokens/min ÷ 60 ÷ %g, keys × %d req/s, keys × %d tokens/min ÷ 60 ÷ %g) = %s req/s",
			keys, c.GatewayOrgRPS, c.GatewayOrgTPM, est, c.GatewayKeyRPS, c.GatewayKeyTPM, est, strconv.FormatFloat(rps, 'f', 3, 64))
	case ProfileWindow:
		rps := float64(c.WindowLimit) / c.WindowSize.Seconds()
		return rps, fmt.Sprintf("%d requests per %v window = %s req/s", c.WindowLimit, c.WindowSize, strconv.FormatFloat(rps, 'f', 3, 64))
	}
	cost := float64(promptTokens) + c.OutputWeight*meanCompletion
	rps := c.DrainTokensPerSecond() / cost
	return rps, fmt.Sprintf("drain %s weighted tokens/s (PTU %g × %g tokens/min ÷ 60) ÷ mean cost %s (prompt %d + %g × mean completion %s) = %s req/s",
		strconv.FormatFloat(c.DrainTokensPerSecond(), 'f', 1, 64), c.PTU, c.TokensPerPTU, strconv.FormatFloat(cost, 'f', 1, 64),
		promptTokens, c.OutputWeight, strconv.FormatFloat(meanCompletion, 'f', 1, 64), strconv.FormatFloat(rps, 'f', 3, 64))
}
