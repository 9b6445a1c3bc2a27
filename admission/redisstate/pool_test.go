package redisstate

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestPoolSumsFallbacks: a Pool's Coordinators each keep their own
// deployment's state, and its Fallbacks sums theirs: two on a Redis that
// is down fall back once each.
func TestPoolSumsFallbacks(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	p := NewPool("redis://"+down+"/0", "", Options{Deployment: "ignored", CallTimeout: time.Second})
	if _, err := p.Open(""); err == nil {
		t.Fatal("a Coordinator on no deployment opened")
	}
	a, err := p.Open("run-1/client-0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := p.Open("run-1/client-1")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.keys == b.keys || a.o.Deployment != "run-1/client-0" {
		t.Fatalf("two deployments share keys %v, or the Pool's Deployment won: %q", a.keys, a.o.Deployment)
	}
	for _, c := range []*Coordinator{a, b} {
		if _, _, err := c.Cooldown(context.Background(), time.Now(), "retry-after"); err == nil {
			t.Fatal("a Redis that is down answered")
		}
	}
	if n := p.Fallbacks(); n != 2 {
		t.Fatalf("Fallbacks %d, want 2", n)
	}
}
