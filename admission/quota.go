package admission

import (
	"math"
	"strconv"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// RetryQuotaConfig is a retry token bucket's arithmetic. StandardRetryQuota
// and ThrottlingRetryQuota give the two best-known ones.
type RetryQuotaConfig struct {
	// Capacity is the tokens the bucket starts with and the most it
	// holds (> 0).
	Capacity float64
	// RetryCost is what a retry to the primary target takes (≥ 0).
	RetryCost float64
	// RefusalCost is what every refusal of the primary target takes,
	// retried or not (≥ 0); the bucket never goes below 0.
	RefusalCost float64
	// Refund is what a 2xx answer of the primary target gives back (≥ 0).
	Refund float64
	// RefundRetry: a 2xx after retries gives back what its last retry
	// took, instead of Refund.
	RefundRetry bool
	// Floor: a retry is allowed only while the tokens are above it, in
	// [0, Capacity).
	Floor float64
}

// StandardRetryQuota is the AWS SDKs' standard retry mode's quota: 500
// tokens; a retry takes 5; a retry needs its cost in tokens; a 2xx on
// the first attempt gives back 1, one after retries what its last retry
// took (botocore's RetryQuotaChecker; aws-sdk-go-v2's retry.Standard).
// Refusals cost nothing until they are retried. It is the quota of both
// the SDKs' behaviour before 2026 and their 2026 update for what this
// package retries, refusals, which the SDKs count as throttles: before,
// any retry took 5 but one after a timeout 10; since, a throttle's retry
// takes 5 and any other 14. This package retries neither a timeout nor a
// transient error.
func StandardRetryQuota() RetryQuotaConfig {
	return RetryQuotaConfig{Capacity: 500, RetryCost: 5, Refund: 1, RefundRetry: true}
}

// ThrottlingRetryQuota is gRPC's retry throttling (proposal A6, "Retry
// Throttling"): the bucket starts at maxTokens (gRPC takes it in (0,
// 1000]); every refusal takes 1, every 2xx gives back tokenRatio (gRPC
// takes it in (0, 1]), and retries are allowed only while the tokens are
// above maxTokens/2. A retry itself costs nothing.
func ThrottlingRetryQuota(maxTokens, tokenRatio float64) RetryQuotaConfig {
	return RetryQuotaConfig{Capacity: maxTokens, RefusalCost: 1, Refund: tokenRatio, Floor: maxTokens / 2}
}

// RetryQuota is a client's retry token bucket: retries spend tokens,
// successes earn them back, and with too few tokens a refusal is not
// retried at all — the request gives up (or redirects) with it, as a
// refusal past MaxAttempts does. So while the primary target refuses
// most requests, a client sends about one attempt per request instead of
// MaxAttempts, and when it recovers the retries come back. It counts only
// the primary target: a redirect is not a retry, and the fallback's
// answers neither spend nor earn.
//
// A RetryQuota belongs to one client (one Transport: Policy.RetryQuota);
// it is safe for concurrent use.
type RetryQuota struct {
	cfg RetryQuotaConfig

	mu     sync.Mutex
	tokens float64
}

// NewRetryQuota returns a full RetryQuota with cfg, or an error naming the
// field out of range.
func NewRetryQuota(cfg RetryQuotaConfig) (*RetryQuota, error) {
	finite := func(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }
	switch {
	case !(cfg.Capacity > 0) || math.IsInf(cfg.Capacity, 0):
		return nil, valid.Errorf("Capacity", "must be a positive number of tokens (500 is the AWS SDKs')")
	case !finite(cfg.RetryCost):
		return nil, valid.Errorf("RetryCost", "must be a number of tokens, at least 0")
	case !finite(cfg.RefusalCost):
		return nil, valid.Errorf("RefusalCost", "must be a number of tokens, at least 0")
	case !finite(cfg.Refund):
		return nil, valid.Errorf("Refund", "must be a number of tokens, at least 0")
	case !(cfg.Floor >= 0 && cfg.Floor < cfg.Capacity):
		return nil, valid.Errorf("Floor", "must be at least 0 and below {Capacity}")
	}
	return &RetryQuota{cfg: cfg, tokens: cfg.Capacity}, nil
}

// Tokens is what the bucket holds now.
func (q *RetryQuota) Tokens() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tokens
}

// take spends a retry's cost when the bucket allows a retry: it holds
// the cost and more than the Floor. left is what it holds after.
func (q *RetryQuota) take() (ok bool, cost, left float64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.tokens < q.cfg.RetryCost || q.tokens <= q.cfg.Floor {
		return false, q.cfg.RetryCost, q.tokens
	}
	q.tokens -= q.cfg.RetryCost
	return true, q.cfg.RetryCost, q.tokens
}

// refused spends a refusal's cost.
func (q *RetryQuota) refused() {
	q.mu.Lock()
	q.tokens = max(0, q.tokens-q.cfg.RefusalCost)
	q.mu.Unlock()
}

// succeeded gives back what a 2xx earns; retried: the request's retry
// took a retry's cost.
func (q *RetryQuota) succeeded(retried bool) {
	refund := q.cfg.Refund
	if q.cfg.RefundRetry && retried {
		refund = q.cfg.RetryCost
	}
	q.mu.Lock()
	q.tokens = min(q.cfg.Capacity, q.tokens+refund)
	q.mu.Unlock()
}

// Admit sends every attempt: the quota is spent on retries (Retry).
func (q *RetryQuota) Admit(Ask) Admission { return Admission{} }

// Retry takes a retry's cost: ok is false when the quota does not allow
// it. note says so, for the Decision's Reason. RetryQuota is a Gate.
func (q *RetryQuota) Retry(Ask) (ok bool, note string) {
	ok, cost, left := q.take()
	tokens := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	if !ok {
		return false, "; the retry quota's " + tokens(left) + " tokens allow no retry (one takes " + tokens(cost) + ", above " + tokens(q.cfg.Floor) + ")"
	}
	return true, "; the retry quota takes " + tokens(cost) + ", " + tokens(left) + " left"
}

// Learn spends a refusal's cost, or gives back what a 2xx earns: what the
// request's last retry took when it had one and RefundRetry says so.
func (q *RetryQuota) Learn(a Answer) string {
	switch {
	case a.Refused:
		q.refused()
	case a.Status >= 200 && a.Status < 300:
		q.succeeded(a.Retried)
	}
	return ""
}
