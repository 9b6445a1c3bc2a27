package redisstate_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/admission/redisstate"
)

// Every process of a fleet opens the same Redis and names the same
// deployment: a refusal met by one holds the others (the shared cooldown)
// and spaces their retries (Slots).
func Example() {
	c, err := redisstate.Open("redis://127.0.0.1:6379/0", os.Getenv("REDIS_PASSWORD"), redisstate.Options{
		Deployment: "https://NAME.openai.azure.com/openai/deployments/gpt-4o-ptu",
		Warn:       func(err error) { fmt.Fprintln(os.Stderr, "warning: Redis failed; deciding alone:", err) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Check(context.Background()); err != nil {
		fmt.Println(err) // ErrAuth, or down: decisions fall back until it answers
	}
	p := admission.DefaultPolicy()
	p.SharedCooldown, p.Slots, p.Coordinator = true, admission.NewSlots(0), c
	t, err := admission.New(nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: t}
	_ = client // send through it as through any http.Client
}
