package archmap

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mapFile is the map, from the module root.
const mapFile = "docs/ARCHITECTURE.md"

// mapHeader starts the import table of the map.
const mapHeader = "| package | kind | imports (ptuprobe) |"

// The kinds of package the map names.
const (
	kindProduction = "production"
	kindTestsOnly  = "tests only"
)

// row is what the map says of one package.
type row struct {
	line    int // in mapFile
	kind    string
	imports []string
}

// readMap reads the import table of the map: one row per line, its
// first cell one or more backquoted packages, its second their kind, its
// third their imports (backquoted, comma-separated, or —).
func readMap(name string) (map[string]row, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := map[string]row{}
	sc := bufio.NewScanner(f)
	in := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !in:
			in = strings.HasPrefix(line, mapHeader)
			continue
		case !strings.HasPrefix(line, "|"):
			return rows, nil
		case strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			return nil, fmt.Errorf("%s:%d: a row of the import table has %d cells, not 4", mapFile, n, len(cells))
		}
		pkgs, err := codeList(cells[0])
		if err != nil || len(pkgs) == 0 {
			return nil, fmt.Errorf("%s:%d: the package cell %q is not backquoted packages separated by commas", mapFile, n, cells[0])
		}
		kind := strings.TrimSpace(cells[1])
		if kind != kindProduction && kind != kindTestsOnly {
			return nil, fmt.Errorf("%s:%d: kind %q is neither %q nor %q", mapFile, n, kind, kindProduction, kindTestsOnly)
		}
		imports, err := codeList(cells[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: the imports cell: %v", mapFile, n, err)
		}
		for _, p := range pkgs {
			if prev, ok := rows[p]; ok {
				return nil, fmt.Errorf("%s:%d: %s has a row already, at line %d", mapFile, n, p, prev.line)
			}
			rows[p] = row{line: n, kind: kind, imports: imports}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !in {
		return nil, fmt.Errorf("%s has no line starting %q", mapFile, mapHeader)
	}
	return rows, nil
}

// codeList reads a cell of backquoted names separated by commas, or "—"
// for none.
func codeList(cell string) ([]string, error) {
	cell = strings.TrimSpace(cell)
	if cell == "—" {
		return nil, nil
	}
	var out []string
	for item := range strings.SplitSeq(cell, ",") {
		item = strings.TrimSpace(item)
		name, open := strings.CutPrefix(item, "`")
		name, closed := strings.CutSuffix(name, "`")
		if !open || !closed || name == "" || strings.Contains(name, "`") {
			return nil, fmt.Errorf("%q is not a backquoted package (write — for none)", item)
		}
		out = append(out, name)
	}
	return out, nil
}

// TestImportsFollowTheMap checks the map's import table against every
// production file, both ways: what a file imports, the map lists for its
// package; what the map lists, some production file of the package
// imports. A tests-only package is imported by test files alone.
func TestImportsFollowTheMap(t *testing.T) {
	t.Parallel()
	m := load(t)
	rows, err := readMap(filepath.Join(m.root, mapFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range m.pkgs {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("package %s has no row in %s's import table: add one (its kind, what it imports)", pkg, mapFile)
		}
	}
	for pkg, r := range rows {
		if !slices.Contains(m.pkgs, pkg) {
			t.Errorf("%s:%d: the map names package %s, which holds no Go file: remove it from the row", mapFile, r.line, pkg)
		}
		for _, imp := range r.imports {
			if to, ok := rows[imp]; ok && to.kind == kindTestsOnly && r.kind == kindProduction {
				t.Errorf("%s:%d: production package %s may not import %s: it is %s", mapFile, r.line, pkg, imp, kindTestsOnly)
			}
		}
	}
	used := map[string]map[string]bool{} // package → its production imports
	for _, f := range m.files {
		if f.test {
			continue
		}
		r, ok := rows[f.pkg]
		if !ok {
			continue // said above
		}
		for _, imp := range m.imports(f) {
			if used[f.pkg] == nil {
				used[f.pkg] = map[string]bool{}
			}
			used[f.pkg][imp.pkg] = true
			switch to, known := rows[imp.pkg]; {
			case known && to.kind == kindTestsOnly && r.kind == kindProduction:
				t.Errorf("%s:%d imports %s, which is for tests only (%s)", f.rel, imp.line, imp.pkg, mapFile)
			case !slices.Contains(r.imports, imp.pkg):
				t.Errorf("%s:%d imports %s, which the map's row for %s does not list (%s:%d): add it there if it belongs", f.rel, imp.line, imp.pkg, f.pkg, mapFile, r.line)
			}
		}
	}
	for pkg, r := range rows {
		for _, imp := range r.imports {
			if !used[pkg][imp] {
				t.Errorf("%s:%d: the map says %s imports %s, but no production file of it does: remove it from the row", mapFile, r.line, pkg, imp)
			}
		}
	}
}

// TestCodeList: a cell is backquoted names separated by commas, or —;
// anything else is refused, so that prose cannot pass for an import.
func TestCodeList(t *testing.T) {
	t.Parallel()
	for cell, want := range map[string][]string{
		" — ":                        nil,
		"`results`":                  {"results"},
		"`internal/num`, `results` ": {"internal/num", "results"},
	} {
		if got, err := codeList(cell); err != nil || !slices.Equal(got, want) {
			t.Errorf("codeList(%q) = %q, %v; want %q", cell, got, err, want)
		}
	}
	for _, cell := range []string{"", "results", "results`", "`results", "``", "`a`b`", "shapes, `dispatch`", "all of the above"} {
		if got, err := codeList(cell); err == nil {
			t.Errorf("codeList(%q) = %q, want an error", cell, got)
		}
	}
}

// TestReadMapRefuses: a row the test cannot read is an error naming its
// line, never a row left out.
func TestReadMapRefuses(t *testing.T) {
	t.Parallel()
	const head = "# map\n\n" + mapHeader + " why |\n|---|---|---|---|\n" // rows from line 5
	for name, c := range map[string]struct{ text, want string }{
		"no table":      {"# map\n", "has no line starting"},
		"unknown kind":  {head + "| `a` | library | — | |\n", ":5: kind \"library\""},
		"two rows":      {head + "| `a` | production | — | |\n| `b`, `a` | production | — | |\n", ":6: a has a row already, at line 5"},
		"prose imports": {head + "| `a` | production | shapes | |\n", ":5: the imports cell"},
		"bare package":  {head + "| a | production | — | |\n", ":5: the package cell"},
		"short row":     {head + "| `a` | production |\n", ":5: a row of the import table has 2 cells"},
	} {
		path := filepath.Join(t.TempDir(), "map.md")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if rows, err := readMap(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: readMap = %v, %v; want an error with %q", name, rows, err, c.want)
		}
	}
}

// runsInProcess are the packages only internal/vrun may import: the
// virtual clock and the in-process transport. A run of planned traffic
// against the simulator goes through vrun, so a new shape or a new
// consumer of the virtual clock reaches the lab and fit at once.
var runsInProcess = map[string]string{"internal/vclock": "internal/vrun", "internal/inproc": "internal/vrun"}

// TestOnlyVrunRunsTheVirtualClock: no production file but vrun's imports
// internal/vclock or internal/inproc, and no row of the map but vrun's
// lists them.
func TestOnlyVrunRunsTheVirtualClock(t *testing.T) {
	t.Parallel()
	m := load(t)
	rows, err := readMap(filepath.Join(m.root, mapFile))
	if err != nil {
		t.Fatal(err)
	}
	for pkg, r := range rows {
		for _, imp := range r.imports {
			if only, ok := runsInProcess[imp]; ok && pkg != only {
				t.Errorf("%s:%d: %s lists %s, which only %s may import: run through %s", mapFile, r.line, pkg, imp, only, only)
			}
		}
	}
	for _, f := range m.files {
		if f.test {
			continue
		}
		for _, imp := range m.imports(f) {
			if only, ok := runsInProcess[imp.pkg]; ok && f.pkg != only {
				t.Errorf("%s:%d imports %s, which only %s may import", f.rel, imp.line, imp.pkg, only)
			}
		}
	}
}
