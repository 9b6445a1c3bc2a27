package sleep

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestFor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := For(context.Background(), 3*time.Second); err != nil || time.Since(start) != 3*time.Second {
			t.Fatalf("err %v after %v", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if err := For(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("canceled sleep: err %v after %v", err, time.Since(start))
		}
		if For(ctx, 0) == nil || Until(ctx, time.Now()) {
			t.Fatal("a done context must win over a zero wait")
		}
		if !Until(context.Background(), time.Now().Add(-time.Second)) {
			t.Fatal("a past time needs no wait")
		}
	})
}
