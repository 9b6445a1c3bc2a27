package num

import (
	"math"
	"testing"
	"time"
)

func TestDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v      float64
		places int
		want   string
	}{
		{16921.12, 2, "16921.12"},
		{16921.1249, 2, "16921.12"},
		{50.8, 2, "50.8"},
		{43, 2, "43"},
		{0.125, 2, "0.13"},
		{-0.001, 2, "0"},
		{1.0005, 3, "1.001"},
		{1e16, 3, "10000000000000000"},
		{1e308, 2, "1" + zeros(308)},
		{math.Inf(1), 2, "+Inf"},
	}
	for _, tt := range tests {
		if got := Decimal(tt.v, tt.places); got != tt.want {
			t.Errorf("Decimal(%v, %d) = %q, want %q", tt.v, tt.places, got, tt.want)
		}
		if got := string(AppendDecimal(nil, tt.v, tt.places)); got != tt.want {
			t.Errorf("AppendDecimal(%v, %d) = %q, want %q", tt.v, tt.places, got, tt.want)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func TestGrouped(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{16921.12: "16,921.12", 100: "100", 1000: "1,000", -1234567.5: "-1,234,567.5", 0: "0"} {
		if got := Grouped(v, 2); got != want {
			t.Errorf("Grouped(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestMillis(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v      float64
		places int
		want   string
	}{
		{16921.123, 2, "16,921.12 ms"}, {1250.4, 0, "1,250 ms"}, {43, 2, "43 ms"}, {-0.001, 2, "0 ms"}, {0.5, 0, "1 ms"},
	} {
		if got := Millis(tt.v, tt.places); got != tt.want {
			t.Errorf("Millis(%v, %d) = %q, want %q", tt.v, tt.places, got, tt.want)
		}
	}
}

func TestAboutPerSecondCount(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{90*time.Second + 400*time.Millisecond: "1m30s", 4840 * time.Millisecond: "4.8s", 1234567 * time.Microsecond: "1.2s", 12345 * time.Microsecond: "12ms"} {
		if got := About(d); got != want {
			t.Errorf("About(%v) = %s, want %s", d, got, want)
		}
	}
	for r, want := range map[float64]string{2: "2/s", 11.8512: "11.85/s", 0.5: "0.5/s"} {
		if got := PerSecond(r); got != want {
			t.Errorf("PerSecond(%v) = %s, want %s", r, got, want)
		}
	}
	if Count(1, "wave", "waves") != "1 wave" || Count(3, "wave", "waves") != "3 waves" || Count(0, "wave", "waves") != "0 waves" {
		t.Error("Count")
	}
}
