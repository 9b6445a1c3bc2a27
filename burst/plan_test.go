package burst

import (
	"testing"
	"time"
)

func TestPlanOffsets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Config
		want []time.Duration
		wave []int
	}{
		{"one wave at once", Config{Size: 3, Waves: 1, Gap: time.Second}, []time.Duration{0, 0, 0}, []int{0, 0, 0}},
		{"two waves", Config{Size: 2, Waves: 2, Gap: 10 * time.Second}, []time.Duration{0, 0, 10 * time.Second, 10 * time.Second}, []int{0, 0, 1, 1}},
		{"spread", Config{Size: 4, Waves: 2, Gap: 5 * time.Second, Spread: 400 * time.Millisecond},
			[]time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 5 * time.Second, 5100 * time.Millisecond, 5200 * time.Millisecond, 5300 * time.Millisecond},
			[]int{0, 0, 0, 0, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.c.Validate(); err != nil {
				t.Fatal(err)
			}
			p := NewPlan(tt.c)
			for i := range tt.want {
				off, w, ok := p.Next()
				if !ok || off != tt.want[i] || w != tt.wave[i] {
					t.Fatalf("arrival %d = (%v, %d, %v), want (%v, %d, true)", i, off, w, ok, tt.want[i], tt.wave[i])
				}
			}
			if _, _, ok := p.Next(); ok {
				t.Fatal("plan did not end")
			}
			if tt.c.Total() != len(tt.want) {
				t.Fatalf("Total = %d, want %d", tt.c.Total(), len(tt.want))
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	bad := []Config{
		{Size: 0, Waves: 1},
		{Size: 1, Waves: 0},
		{Size: 1, Waves: 1, Gap: -time.Second},
		{Size: 1, Waves: 2, Gap: time.Second, Spread: 2 * time.Second},
		{Size: 1, Waves: 1, Spread: -1},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
	if err := (Config{Size: 20, Waves: 1, Gap: DefaultGap}).Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
	if got := (Config{Size: 4, Waves: 3, Gap: time.Second, Spread: 400 * time.Millisecond}).Span(); got != 2300*time.Millisecond {
		t.Errorf("Span = %v, want 2.3s", got)
	}
}
