package sim

import (
	"net/url"
	"testing"
)

// FuzzQueryValue: the in-place read of a query value is url.ParseQuery's.
func FuzzQueryValue(f *testing.F) {
	for _, s := range []string{"api-version=2024-10-21", "a=1&api-version=x&api-version=y", "api-version", "api-version=", "&&api-version=1",
		"api%2Dversion=1", "api-version=a+b", "x=1;api-version=2", "=1&api-version==2"} {
		f.Add(s, "api-version")
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		q, _ := url.ParseQuery(raw)
		if got, want := queryValue(raw, name), q.Get(name); got != want {
			t.Fatalf("queryValue(%q, %q) = %q, ParseQuery says %q", raw, name, got, want)
		}
	})
}
