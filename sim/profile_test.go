package sim

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// TestProfileRoundTrip writes a profile with a fit and reads it back:
// the settings and the fit are the same, and the Config carries the fit.
func TestProfileRoundTrip(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.PTU, c.BucketDepth, c.BurstPct, c.BurstRefill, c.Faults = 123.4, 905*time.Millisecond, 409.3, 397*time.Second, []string{FaultReset}
	a := 0.97
	p := Profile{Name: "twin", Config: c, Fit: &Fit{Quality: FitGood, Why: "close", Threshold: 0.15, Agreement: &a, Model: ProfilePTU,
		Groups: []FitGroup{{Group: "burst-shaped", KS: 0.01, Recorded: Waits{Count: 3, P50: 1, P90: 2, P99: 3, Max: 3}}}}}
	var b bytes.Buffer
	if err := WriteProfile(&b, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"burst-refill": "6m37s"`) || strings.Contains(b.String(), "sim-ptu") || strings.Contains(b.String(), `"deployment":`) {
		t.Errorf("file:\n%s", b.String())
	}
	got, err := ReadProfile(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "twin" || got.Config.PTU != 123.4 || got.Config.BucketDepth != 905*time.Millisecond || got.Config.BurstRefill != 397*time.Second ||
		len(got.Config.Faults) != 1 || got.Fit == nil || got.Config.Fit != got.Fit || *got.Fit.Agreement != a || got.Fit.Groups[0].Recorded.P99 != 3 {
		t.Fatalf("read back %+v, fit %+v", got.Config, got.Fit)
	}
}

// TestReadProfileRefuses: unknown keys (at the top, in the settings, in
// the fit), a wrong type, another version, a setting Validate refuses
// (named by its key) and a fit's unknown quality are errors.
func TestReadProfileRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, want string }{
		{`{"version":1,"settings":{"ptu":1},"extra":1}`, "unknown field"},
		{`{"version":1,"settings":{"sim-ptu":1}}`, `unknown key "sim-ptu"`},
		{`{"version":1,"settings":{"ptu":"many"}}`, "ptu: want a float64"},
		{`{"version":1,"settings":{"bucket-depth":5}}`, "bucket-depth: want a duration"},
		{`{"version":2,"settings":{}}`, "version 2"},
		{`{"version":1,"settings":{"ptu":0}}`, "ptu 0: want a number > 0"},
		// Issue 35: accepted, and overflowed (a 200 in 0.74 ms).
		{`{"version":1,"settings":{"ttft":"2562047h"}}`, "ttft 2562047h0m0s: want at most 1h0m0s"},
		{`{"version":1,"settings":{},"fit":{"quality":"insufficient"}}`, ""},
		{`{"version":1,"settings":{},"fit":{"quality":"fine"}}`, `quality "fine"`},
		{`{"version":1,"settings":{},"fit":{"quality":"good","bogus":1}}`, "unknown field"},
		{`{"version":1} {}`, "more than one"},
		{`[]`, "not a profile"},
	} {
		_, err := ReadProfile(strings.NewReader(c.file))
		if c.want == "" { // read, not refused
			if err != nil {
				t.Errorf("%s: %v", c.file, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.file, err, c.want)
		}
	}
}

// TestOpenProfile finds the limiter profiles by name, an embedded one by
// its name, and a file by its path; a name that is none of them says what
// the names are.
func TestOpenProfile(t *testing.T) {
	saved := embedded
	t.Cleanup(func() { embedded = saved })
	embedded = fstest.MapFS{"profiles/slow.json": {Data: []byte(`{"version":1,"name":"slow","settings":{"ptu":7}}`)}}
	if p, err := OpenProfile(ProfileWindow); err != nil || p.Config.Profile != ProfileWindow {
		t.Fatalf("window: %+v %v", p.Config.Profile, err)
	}
	p, err := OpenProfile("slow")
	if err != nil || p.Config.PTU != 7 || p.Config.ProfileSource != "slow" {
		t.Fatalf("slow: %v %v", p.Config.PTU, err)
	}
	if names := ProfileNames(); len(names) != 4 || names[3] != "slow" {
		t.Errorf("names %v", names)
	}
	_, err = OpenProfile("no-such")
	if err == nil || !strings.Contains(err.Error(), "ptu, gateway, window, slow") {
		t.Errorf("no-such: %v", err)
	}
}

// TestOpenProfileAmbiguous: a built-in's name that is also a file in the
// working directory is refused, saying how to name the file; ./NAME reads
// the file; a name that is no built-in reads the file, as before. Issue
// 35: the built-in silently won.
func TestOpenProfileAmbiguous(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c := DefaultConfig()
	c.PTU = 42
	var b bytes.Buffer
	if err := WriteProfile(&b, Profile{Name: "mine", Config: c}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ProfileDocuments, ProfilePTU, "twin"} {
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{ProfileDocuments, ProfilePTU} {
		_, err := OpenProfile(name)
		if err == nil || !strings.Contains(err.Error(), "names both a built-in profile and a file in the working directory: give ./"+name) {
			t.Errorf("%s: %v", name, err)
		}
		if p, err := OpenProfile("./" + name); err != nil || p.Config.PTU != 42 {
			t.Errorf("./%s: ptu %v, %v", name, p.Config.PTU, err)
		}
		if p, ok, err := OpenBuiltin(name); !ok || err != nil || p.Config.PTU == 42 {
			t.Errorf("the built-in %s: ptu %v, %v %v", name, p.Config.PTU, ok, err)
		}
	}
	if p, err := OpenProfile("twin"); err != nil || p.Config.PTU != 42 {
		t.Errorf("twin: ptu %v, %v", p.Config.PTU, err)
	}
}

// TestOpenProfileFIFO: a FIFO is refused before it is opened (opening it
// waits for a writer, deaf to a Ctrl-C: issue 35). The test writes a
// valid profile into it, so that before the check the read succeeded;
// with it, the test's writer is released by a reader of its own.
func TestOpenProfileFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "twin.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		_ = WriteProfile(f, Profile{Name: "twin", Config: DefaultConfig()})
	}()
	_, err := OpenProfile(fifo)
	if err == nil {
		<-wrote // the profile was read through the FIFO: the writer is done
		t.Fatal("a FIFO was read as a profile")
	}
	if !strings.Contains(err.Error(), "twin.json: not a regular file") {
		t.Errorf("a FIFO: %v", err)
	}
	// Release the writer, still waiting for a reader: a reader of our own.
	r, err := os.OpenFile(fifo, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, r)
	r.Close()
	<-wrote
}

// FuzzReadProfile: any input is a profile or an error, never a panic;
// a profile read is valid and reads back the same after being written.
func FuzzReadProfile(f *testing.F) {
	f.Add([]byte(`{"version":1,"name":"t","settings":{"ptu":50,"bucket-depth":"2s","faults":"reset"},"fit":{"quality":"poor","why":"x","threshold":0.15,"source":"replay","model":"ptu","objective":1,"models":[],"groups":[]}}`))
	f.Add([]byte(`{"version":1,"settings":{"profile":"window","window-limit":3}}`))
	f.Add([]byte(`{"version":1,"settings":{"ptu":1e309}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadProfile(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := p.Config.Validate(); err != nil {
			t.Fatalf("read an invalid profile: %v", err)
		}
		var b bytes.Buffer
		if err := WriteProfile(&b, p); err != nil {
			t.Fatal(err)
		}
		written := bytes.Clone(b.Bytes())
		again, err := ReadProfile(&b)
		if err != nil {
			t.Fatalf("does not read back: %v\n%s", err, written)
		}
		var b2 bytes.Buffer
		if err := WriteProfile(&b2, again); err != nil || !bytes.Equal(written, b2.Bytes()) {
			t.Fatalf("not the same after a round trip:\n%s\n%s", written, b2.String())
		}
	})
}
