package sim

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// ProfileVersion is the version of the profile file format WriteProfile
// writes and ReadProfile reads.
const ProfileVersion = 1

// MaxProfileBytes bounds a profile file: a twin's settings and its fit's
// table are a few KiB.
const MaxProfileBytes = 1 << 20

// ProfileDocuments names the embedded profile fitted to the published
// events (sim/profiles/documents.json, scripts/documents-profile.sh): the
// default of `ptuprobe characterize`.
const ProfileDocuments = "documents"

// Fit qualities (Fit.Quality): good, poor (a test failed), or
// insufficient (no fitted group held enough refusals to test a
// distribution: the twin may be right or wrong, the run cannot tell).
const (
	FitGood         = "good"
	FitPoor         = "poor"
	FitInsufficient = "insufficient"
)

// Profile is a named set of the simulator's settings, read from a file
// (`ptuprobe fit` writes them: a twin of a measured deployment) or
// embedded (sim/profiles/*.json, by name). Fit says how well the settings
// reproduce the run they were fitted to; nil for a profile made by hand.
type Profile struct {
	Name   string
	Config Config
	Fit    *Fit
}

// Fit is how well a profile's settings reproduce the recorded run they
// were fitted to (`ptuprobe fit`, docs/fit.md). The policy lab recommends
// nothing from a profile whose Quality is not FitGood (Recommends).
type Fit struct {
	// Quality is FitGood, FitPoor or FitInsufficient; Why says which test
	// decided it.
	Quality string `json:"quality"`
	Why     string `json:"why"`
	// Threshold is the largest KS distance a fitted group may have for a
	// good fit; MinAgreement the least share of the recorded sends the
	// twin must refuse or admit alike (replay only; 0 when not judged).
	Threshold    float64 `json:"threshold"`
	MinAgreement float64 `json:"min_agreement,omitempty"`
	// MinWaits is the fewest usable recorded waits a group's KS is tested
	// from at Threshold (FitGroup.Tested); 0 in a file written before it.
	MinWaits int `json:"min_waits,omitempty"`
	// Agreement is that share over the fitted groups' sends; absent when
	// the sends were a plan rather than a recorded run (no refusal
	// pattern to agree with).
	Agreement *float64 `json:"agreement,omitempty"`
	// Source is how the sends were made: "replay" (a recorded run's sends)
	// or "plan" (the main job's plan, against published waits).
	Source string `json:"source"`
	// Model is the limiter profile kept; Models the objective each model
	// tried reached (lower is better), the kept one included.
	Model     string          `json:"model"`
	Objective float64         `json:"objective"`
	Models    []ModelDistance `json:"models"`
	// Groups is every source group, fitted or held out, in the order the
	// sends first name them.
	Groups []FitGroup `json:"groups"`
	// Ranges holds, for every fitted setting of the kept model (keyed as
	// Settings, each end written as Settings writes it: "ptu": [250, 330],
	// "bucket-depth": ["1s", "3s"]), the range of the values that fit the
	// run within its tolerance (docs/fit.md, "What the run cannot tell
	// apart"); absent in a file written before it.
	Ranges map[string][2]json.RawMessage `json:"ranges,omitempty"`
	// RefusalCost says how the fit set the refusal-cost setting: the
	// share of a request a refusal takes that the run's waits fit, or 0
	// and why; absent in a file written before it.
	RefusalCost string `json:"refusal_cost,omitempty"`
}

// ModelDistance is the objective one limiter model reached.
type ModelDistance struct {
	Model     string  `json:"model"`
	Objective float64 `json:"objective"`
}

// FitGroup is one source group's recorded and twin waits.
type FitGroup struct {
	Group string `json:"group"`
	// HeldOut: the fit did not see this group; its distance checks it.
	HeldOut bool `json:"held_out,omitempty"`
	// Tested: the group held at least Fit.MinWaits usable waits, so its KS
	// tested a distribution; an untested group's KS is reported, and
	// decides nothing.
	Tested bool `json:"tested"`
	// KS is the two-sample Kolmogorov–Smirnov distance between the
	// recorded advised waits and the twin's at the fit's resolution (waits
	// closer than 50 ms or 10% are one wait; docs/fit.md), ExactKS the
	// plain one (0: the same distribution).
	KS       float64 `json:"ks"`
	ExactKS  float64 `json:"exact_ks"`
	Recorded Waits   `json:"recorded"`
	Twin     Waits   `json:"twin"`
}

// Waits summarizes a group's advised waits in ms, the documents' table:
// the 429s with a usable wait and the type-7 percentiles of the waits.
type Waits struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Poor reports whether f is a fit that judged its settings poor.
func (f *Fit) Poor() bool { return f != nil && f.Quality == FitPoor }

// Recommends reports whether a lab may recommend from a profile of this
// fit: one made by hand (nil) or a good fit; never a poor or an
// insufficient one.
func (f *Fit) Recommends() bool { return f == nil || f.Quality == FitGood }

// setting is one key of a profile file's settings: the --sim-* flag's
// name without its prefix, and the Config field it sets. The run's own
// settings (deployment, time scale, seed, keys, the witness) are not a
// deployment's behaviour and are not in a profile; a deployment's name
// must never be written to a file either.
type setting struct{ key, field string }

var profileSettings = []setting{
	{"profile", "Profile"}, {"dialect", "Dialect"}, {"omit-retry-headers", "OmitRetryHeaders"},
	{"ietf-retry-after", "IETFRetryAfter"}, {"ietf-legacy", "IETFLegacy"},
	{"ptu", "PTU"}, {"tokens-per-ptu", "TokensPerPTU"}, {"output-weight", "OutputWeight"},
	{"bucket-depth", "BucketDepth"}, {"burst-pct", "BurstPct"}, {"burst-refill", "BurstRefill"},
	{"default-max-tokens", "DefaultMaxTokens"}, {"ttft", "TTFT"}, {"tpot", "TPOT"},
	{"fault-rate", "FaultRate"}, {"faults", "Faults"}, {"fault-slow", "SlowDelay"},
	{"spillover-deployment", "SpilloverDeployment"}, {"spillover-per-request", "SpilloverPerRequest"},
	{"standard-tpm", "StandardTPM"}, {"standard-rpm", "StandardRPM"},
	{"utilization-header", "UtilizationHeader"},
	{"gateway-key-rps", "GatewayKeyRPS"}, {"gateway-key-tpm", "GatewayKeyTPM"},
	{"gateway-org-rps", "GatewayOrgRPS"}, {"gateway-org-tpm", "GatewayOrgTPM"},
	{"gateway-orgs", "GatewayOrgs"}, {"gateway-retry-after", "GatewayRetryAfter"},
	{"window-size", "WindowSize"}, {"window-limit", "WindowLimit"},
	{"neighbour-first", "NeighbourFirst"}, {"neighbour-every", "NeighbourEvery"},
	{"neighbour-min", "NeighbourMin"}, {"neighbour-max", "NeighbourMax"},
	{"cold-drain-pct", "ColdDrainPct"}, {"cold-after", "ColdAfter"},
	{"refusal-cost", "RefusalCost"},
}

// ProfileKeys maps each key of a profile file's settings to the Config
// field it sets, for the command line to check against its flags.
func ProfileKeys() map[string]string {
	m := make(map[string]string, len(profileSettings))
	for _, s := range profileSettings {
		m[s.key] = s.field
	}
	return m
}

// profileFile is the file's JSON.
type profileFile struct {
	Version  int                        `json:"version"`
	Name     string                     `json:"name"`
	Settings map[string]json.RawMessage `json:"settings"`
	Fit      *Fit                       `json:"fit,omitempty"`
}

// ReadProfile reads a profile file: a version, a name, the settings
// (every key a --sim-* flag's name without its prefix; a key not given
// keeps DefaultConfig's value) and, from `ptuprobe fit`, the fit. Unknown
// keys, a setting of the wrong type and settings Config.Validate refuses
// are errors; a Validate error keeps its *valid.Error.
func ReadProfile(r io.Reader) (Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxProfileBytes+1))
	if err != nil {
		return Profile{}, err
	}
	if len(data) > MaxProfileBytes {
		return Profile{}, fmt.Errorf("larger than %d bytes: not a profile", MaxProfileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f profileFile
	if err := dec.Decode(&f); err != nil {
		return Profile{}, fmt.Errorf("not a profile: %v", clipErr(err))
	}
	if dec.More() {
		return Profile{}, errors.New("not a profile: more than one JSON value")
	}
	if f.Version != ProfileVersion {
		return Profile{}, fmt.Errorf("version %d: this ptuprobe reads version %d", f.Version, ProfileVersion)
	}
	p := Profile{Name: f.Name, Config: DefaultConfig(), Fit: f.Fit}
	if err := applySettings(&p.Config, f.Settings); err != nil {
		return Profile{}, err
	}
	if err := p.Fit.check(); err != nil {
		return Profile{}, err
	}
	if err := p.Config.Validate(); err != nil {
		return Profile{}, fmt.Errorf("settings: %s", settingErrors(err))
	}
	p.Config.Fit = p.Fit
	return p, nil
}

// applySettings sets c's fields from a file's settings, in key order so
// the first bad key is the one reported.
func applySettings(c *Config, settings map[string]json.RawMessage) error {
	keys := ProfileKeys()
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	slices.Sort(names)
	v := reflect.ValueOf(c).Elem()
	for _, k := range names {
		field, ok := keys[k]
		if !ok {
			return fmt.Errorf("settings: unknown key %q", truncateForError(k))
		}
		if err := decodeSetting(v.FieldByName(field), settings[k]); err != nil {
			return fmt.Errorf("settings: %s: %v", k, err)
		}
	}
	return nil
}

var durationType = reflect.TypeFor[time.Duration]()

// decodeSetting decodes one setting into f: a duration as Go writes one
// ("1.5s"), a list of faults as "a,b", anything else as its JSON type.
func decodeSetting(f reflect.Value, raw json.RawMessage) error {
	switch {
	case f.Type() == durationType:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return errors.New("want a duration such as \"1.5s\"")
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration", truncateForError(s))
		}
		f.SetInt(int64(d))
		return nil
	case f.Kind() == reflect.Slice:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return errors.New("want a comma-separated list")
		}
		if s == "" { // none named: every fault, as --sim-faults's default
			f.Set(reflect.Zero(f.Type()))
			return nil
		}
		list, err := ParseFaults(s)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(list))
		return nil
	}
	p := reflect.New(f.Type())
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return fmt.Errorf("want a %s", f.Kind())
	}
	if p.Elem().Kind() == reflect.Float64 && math.IsInf(p.Elem().Float(), 0) {
		return errors.New("out of range")
	}
	f.Set(p.Elem())
	return nil
}

// settingErrors words Validate's errors by the file's keys ("ptu: 0: want
// a number > 0"), as the command line words them by its flags.
func settingErrors(err error) string {
	keyOf := map[string]string{}
	for _, s := range profileSettings {
		keyOf[s.field] = s.key
	}
	name := func(field string) string {
		if k, ok := keyOf[field]; ok {
			return k
		}
		return field
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []string
	for _, e := range errs {
		var v *valid.Error
		if errors.As(e, &v) {
			out = append(out, v.Render(name))
		} else {
			out = append(out, e.Error())
		}
	}
	return strings.Join(out, "; ")
}

// check refuses a fit whose quality is none of the three.
func (f *Fit) check() error {
	if f == nil {
		return nil
	}
	if f.Quality != FitGood && f.Quality != FitPoor && f.Quality != FitInsufficient {
		return fmt.Errorf("fit: quality %q: want %s, %s or %s", truncateForError(f.Quality), FitGood, FitPoor, FitInsufficient)
	}
	keys := ProfileKeys()
	for _, k := range slices.Sorted(maps.Keys(f.Ranges)) {
		field, ok := keys[k]
		if !ok {
			return fmt.Errorf("fit: ranges: unknown key %q", truncateForError(k))
		}
		var c Config
		for _, end := range f.Ranges[k] {
			if err := decodeSetting(reflect.ValueOf(&c).Elem().FieldByName(field), end); err != nil {
				return fmt.Errorf("fit: ranges: %s: %v", k, err)
			}
		}
	}
	return nil
}

// EncodeSetting is c's setting key as a profile file writes it: a
// duration as Go writes one ("1.5s"), faults as "a,b", anything else as
// its JSON value.
func EncodeSetting(c Config, key string) (json.RawMessage, error) {
	field, ok := ProfileKeys()[key]
	if !ok {
		return nil, fmt.Errorf("settings: unknown key %q", truncateForError(key))
	}
	fv := reflect.ValueOf(c).FieldByName(field)
	var x any = fv.Interface()
	switch {
	case fv.Type() == durationType:
		x = time.Duration(fv.Int()).String()
	case fv.Kind() == reflect.Slice:
		x = strings.Join(c.Faults, ",")
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("settings: %s: %w", key, err)
	}
	return b, nil
}

// WriteProfile writes p as a profile file: every setting of the table,
// so the file reads the same whatever later defaults become, and the fit.
func WriteProfile(w io.Writer, p Profile) error {
	f := profileFile{Version: ProfileVersion, Name: p.Name, Settings: map[string]json.RawMessage{}, Fit: p.Fit}
	for _, s := range profileSettings {
		b, err := EncodeSetting(p.Config, s.key)
		if err != nil {
			return err
		}
		f.Settings[s.key] = b
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// profiles are the named profiles shipped in the binary: sim/profiles,
// each NAME.json a profile file (README.md says what the folder is).
//
//go:embed profiles
var profiles embed.FS

// embedded is the file system named profiles are read from (tests swap it).
var embedded fs.FS = profiles

// ProfileNames lists the named profiles: the limiter profiles (ptu,
// gateway, window: DefaultConfig with that Profile) and the embedded ones.
func ProfileNames() []string {
	out := []string{ProfilePTU, ProfileGateway, ProfileWindow}
	entries, _ := fs.ReadDir(embedded, "profiles")
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() {
			out = append(out, name)
		}
	}
	return out
}

// OpenProfile finds the profile a --sim-profile value names: a limiter
// profile (ptu, gateway, window), a named embedded profile, or else the
// path of a profile file. A value with a path separator is always a file;
// a built-in's name that is also a file in the working directory is
// refused (AmbiguousProfile), never silently either. The file must be a
// regular file (a FIFO would block the read beyond a Ctrl-C). The Config
// it returns records where it came from (Config.ProfileSource: the name,
// or the file's base name) and its Fit.
func OpenProfile(name string) (Profile, error) {
	if err := AmbiguousProfile(name); err != nil {
		return Profile{}, err
	}
	if p, ok, err := OpenBuiltin(name); ok || err != nil {
		return p, err
	}
	return openProfileFile(name)
}

// AmbiguousProfile refuses a plain name (no path separator) that is both
// a built-in profile and a file in the working directory: the user may
// mean either, and ./NAME says the file.
func AmbiguousProfile(name string) error {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) || !slices.Contains(ProfileNames(), name) {
		return nil
	}
	if _, err := os.Lstat(name); err == nil {
		return fmt.Errorf("%q names both a built-in profile and a file in the working directory: give ./%s for the file, or run elsewhere for the built-in", name, name)
	}
	return nil
}

// OpenBuiltin reads the built-in profile name (a limiter profile or an
// embedded one), never a file; ok is false when no built-in has that
// name.
func OpenBuiltin(name string) (p Profile, ok bool, err error) {
	switch name {
	case ProfilePTU, ProfileGateway, ProfileWindow:
		c := DefaultConfig()
		c.Profile = name
		return Profile{Name: name, Config: c}, true, nil
	}
	if !isProfileName(name) {
		return Profile{}, false, nil
	}
	f, err := embedded.Open(path.Join("profiles", name+".json"))
	if err != nil {
		return Profile{}, false, nil
	}
	defer f.Close()
	p, err = ReadProfile(f)
	if err != nil {
		return Profile{}, true, fmt.Errorf("profile %s: %w", name, err)
	}
	p.Config.ProfileSource = name
	return p, true, nil
}

// openProfileFile reads the profile file at name: a regular file, so the
// read ends (a FIFO or a device could block it, deaf to a cancel).
func openProfileFile(name string) (Profile, error) {
	fi, err := os.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Profile{}, fmt.Errorf("%q is neither a profile (%s) nor a file", truncateForError(name), strings.Join(ProfileNames(), ", "))
		}
		return Profile{}, err
	}
	if !fi.Mode().IsRegular() {
		return Profile{}, fmt.Errorf("%s: not a regular file (a profile is a file `ptuprobe fit` writes)", filepath.Base(name))
	}
	f, err := os.Open(name)
	if err != nil {
		return Profile{}, err
	}
	defer f.Close()
	p, err := ReadProfile(f)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	p.Config.ProfileSource = filepath.Base(name)
	return p, nil
}

// IsLimiterProfile reports whether name is one of the limiter profiles
// Config.Profile takes (ptu, gateway, window) rather than a profile of
// settings.
func IsLimiterProfile(name string) bool {
	return name == ProfilePTU || name == ProfileGateway || name == ProfileWindow
}

// isProfileName: an embedded profile's name is a plain word, never a path.
func isProfileName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// clipErr bounds a JSON decoder's message, which can quote the input.
func clipErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
