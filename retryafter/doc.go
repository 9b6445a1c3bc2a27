// Package retryafter reads what a server advised about waiting before a
// retry: the wait in retry-after-ms (Azure OpenAI) and retry-after (RFC 9110
// §10.2.3: delay-seconds or an HTTP-date), with one documented precedence.
// It is the one reader of that advice: the client records it, the
// admission library acts on it, tests check both against it. The embedded
// simulator writes these headers on its own and must never import this
// package, or the two would agree on a bug.
//
// Precedence: retry-after-ms when it is a non-negative number (decimals
// allowed); otherwise retry-after as delay-seconds × 1000 (decimals
// allowed: gateways send them); otherwise retry-after as an HTTP-date,
// against the response's Date header when it parses, else the local clock
// (a date in the past advises 0 ms). Whatever the unit, a wait over
// results.MaxWaitMS (10¹² ms) is unusable. A header present but unusable
// gives Source "invalid"; no header gives "none". A field repeated with
// different values is a list, not a number nor a date: unusable.
//
// It imports results only (for the wait sources and the cap).
package retryafter
