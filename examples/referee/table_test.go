package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const committed = `intro
<!-- referee-conformance:begin -->
| client | version | dialect | scenario | verdict | requests | early_returns |
|---|---|---|---|---|---:|---:|
| a | 1 | azure | storm | PASS | 65 | 0 |
| b | 2 | openai | headers-only | FAIL | 68 | 17 ✗ |
| node | 3 | openai | storm | PASS | 60 | 0 |
<!-- referee-conformance:end -->
outro
`

// TestVerifyTable: counts may differ, verdicts may not; a committed row
// this run did not make (node missing) is no failure.
func TestVerifyTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	if err := os.WriteFile(doc, []byte(committed), 0o644); err != nil {
		t.Fatal(err)
	}
	head := "| client | version | dialect | scenario | verdict | requests | early_returns |\n|---|---|---|---|---|---:|---:|\n"
	for _, tt := range []struct {
		name, rows string
		ok         bool
	}{
		{"other counts", "| a | 1 | azure | storm | PASS | 70 | 0 |\n| b | 2 | openai | headers-only | FAIL | 60 | 3 ✗ |\n", true},
		{"a check now passes", "| a | 1 | azure | storm | PASS | 70 | 0 |\n| b | 2 | openai | headers-only | FAIL | 60 | 0 |\n", false},
		{"another version", "| a | 1.1 | azure | storm | PASS | 70 | 0 |\n", false},
		{"a row not committed", "| c | 1 | azure | storm | PASS | 70 | 0 |\n", false},
	} {
		table := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".md")
		if err := os.WriteFile(table, []byte(head+tt.rows), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := verifyTable(table, []string{doc}); (err == nil) != tt.ok {
			t.Errorf("%s: verify error %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// TestWriteTable replaces what is between the markers and nothing else.
func TestWriteTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc, table := filepath.Join(dir, "doc.md"), filepath.Join(dir, "t.md")
	os.WriteFile(doc, []byte(committed), 0o644)
	os.WriteFile(table, []byte("| x |\n|---|\n| 1 |\n"), 0o644)
	if err := writeTable(table, []string{doc}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(doc)
	want := "intro\n" + beginMarker + "\n| x |\n|---|\n| 1 |\n" + endMarker + "\noutro\n"
	if string(got) != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	if err := writeTable(table, []string{table}); err == nil {
		t.Fatal("a file without markers was written")
	}
}
