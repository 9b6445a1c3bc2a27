package testkit

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// DirFiles reads every file of dir, hidden ones (temporaries) included,
// by name; nil when dir does not exist.
func DirFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// SameFiles reports whether two DirFiles snapshots hold the same files
// with the same contents; a directory that does not exist (nil) differs
// from an empty one.
func SameFiles(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}
