package schedule

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestReplay(t *testing.T) {
	t.Parallel()
	s := time.Second
	offsets := []time.Duration{0, s, s, 2 * s, 3 * s}
	for _, c := range []struct {
		duration time.Duration
		want     []time.Duration
	}{
		{0, offsets},
		{2 * s, offsets[:3]}, // the arrivals before the end
		{2*s + 1, offsets[:4]},
		{time.Hour, offsets},
	} {
		p, err := NewReplay(offsets, c.duration)
		if err != nil {
			t.Fatal(err)
		}
		var got []time.Duration
		for {
			at, wave, ok := p.Next()
			if !ok {
				break
			}
			if wave != -1 {
				t.Errorf("wave %d; want -1", wave)
			}
			got = append(got, at)
		}
		if !slices.Equal(got, c.want) || p.Total() != len(c.want) || p.Duration() != c.want[len(c.want)-1] {
			t.Errorf("cut at %v: %v (%d, %v); want %v", c.duration, got, p.Total(), p.Duration(), c.want)
		}
	}
	for name, c := range map[string]struct {
		offsets  []time.Duration
		duration time.Duration
	}{
		"unsorted": {[]time.Duration{s, 0}, 0},
		"negative": {[]time.Duration{-1, 0}, 0},
		"too long": {[]time.Duration{0, MaxReplaySpan + 1}, 0},
		"no row":   {nil, 0},
		"cut all":  {[]time.Duration{s}, s},
		"dur < 0":  {[]time.Duration{s}, -1},
	} {
		if _, err := NewReplay(c.offsets, c.duration); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewReplay([]time.Duration{s}, s); !errors.Is(err, ErrEmptyPlan) {
		t.Errorf("cut to nothing: %v; want ErrEmptyPlan", err)
	}
}
