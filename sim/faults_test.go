package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"http-date,missing", "http-date,missing", ""},
		{" 503 , RESET,,slow ", "503,reset,slow", ""},
		{"garbage,garbage", "garbage", ""},
		{"", "", "empty fault list"},
		{" , ", "", "empty fault list"},
		{"503,teapot", "", `unknown fault "teapot"`},
		{strings.Repeat("a", 300), "", "longer than"},
	}
	for _, tc := range tests {
		got, err := ParseFaults(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseFaults(%q) error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseFaults(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"http-date,missing,garbage,503,reset,slow", "", ",", "RESET", "x,,y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseFaults(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if len(got) == 0 || len(got) > len(AllFaults()) {
			t.Fatalf("ParseFaults(%q) = %v", s, got)
		}
		for _, k := range got {
			if !knownFault(k) {
				t.Fatalf("unknown fault %q accepted", k)
			}
		}
	})
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault  string
		status int
		check  func(t *testing.T, h http.Header)
	}{
		{FaultHTTPDate, 429, func(t *testing.T, h http.Header) {
			at, err := http.ParseTime(h.Get("Retry-After"))
			date, err2 := http.ParseTime(h.Get("Date"))
			if err != nil || err2 != nil || !at.After(date) || h.Get("Retry-After-Ms") != "" {
				t.Errorf("http-date: retry-after %q date %q ms %q", h.Get("Retry-After"), h.Get("Date"), h.Get("Retry-After-Ms"))
			}
		}},
		{FaultMissing, 429, func(t *testing.T, h http.Header) {
			if h.Get("Retry-After") != "" || h.Get("Retry-After-Ms") != "" {
				t.Errorf("missing: has retry headers %v", h)
			}
		}},
		{FaultGarbage, 429, func(t *testing.T, h http.Header) {
			if h.Get("Retry-After-Ms") != "soon" || h.Get("Retry-After") == "" {
				t.Errorf("garbage: %v", h)
			}
		}},
		{Fault503, 503, nil},
	}
	// Both profiles begin a request the same way (Server.arrive).
	profiles := []struct{ name, path string }{{ProfilePTU, azurePath}, {ProfileGateway, "/v1/messages"}}
	for _, tc := range tests {
		for _, p := range profiles {
			t.Run(tc.fault+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				cfg := testConfig()
				cfg.Profile = p.name
				cfg.FaultRate = 1
				cfg.Faults = []string{tc.fault}
				s, _, ts := newSim(t, cfg)
				resp, _ := post(t, ts.URL, p.path, chatBody(40, 10))
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				if tc.check != nil {
					tc.check(t, resp.Header)
				}
				if st := s.Stats(); st.Faults != 1 || st.Requests != 1 || st.Admitted != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.FaultRate = 1
		cfg.Faults = []string{FaultReset}
		_, _, ts := newSim(t, cfg)
		req, _ := http.NewRequest("POST", ts.URL+azurePath, strings.NewReader(chatBody(40, 10)))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("reset: got status %d, want a connection error", resp.StatusCode)
		}
	})
	t.Run("slow", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.FaultRate = 1
		cfg.Faults = []string{FaultSlow}
		cfg.SlowDelay = 30 * time.Second
		_, clk, ts := newSim(t, cfg)
		done := goPost(t, ts.URL, azurePath, chatBody(40, 10))
		waitSleepers(t, clk, 1)
		select {
		case <-done:
			t.Fatal("slow fault answered before its delay")
		default:
		}
		clk.Advance(30 * time.Second)
		if got := <-done; !strings.Contains(got, `"chat.completion"`) {
			t.Errorf("after the delay: %q, want a normal completion", got)
		}
	})
	t.Run("share", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig()
		cfg.PTU = 6000
		cfg.FaultRate = 0.25
		cfg.Faults = []string{Fault503}
		s, _, ts := newSim(t, cfg)
		for range 400 {
			post(t, ts.URL, azurePath, chatBody(40, 10))
		}
		if f := s.Stats().Faults; f < 60 || f > 140 {
			t.Errorf("%d faults in 400 at rate 0.25", f)
		}
	})
}
