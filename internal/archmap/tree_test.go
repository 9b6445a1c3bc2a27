package archmap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// goFile is one parsed Go file of the module.
type goFile struct {
	rel  string // its path from the module root, slash-separated
	pkg  string // its package: its directory from the module root ("." for the root)
	test bool   // a _test.go file
	ast  *ast.File
}

// module is the module's Go files, parsed once for every test.
type module struct {
	root, path string // the module's directory and its module path
	fset       *token.FileSet
	files      []goFile // in path order
	pkgs       []string // every package directory, sorted
}

var (
	loadOnce sync.Once
	loaded   *module
	loadErr  error
)

// load parses the module: production files whole, test files' imports.
func load(t *testing.T) *module {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = parseModule() })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func parseModule() (*module, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	m := &module{root: root, fset: token.NewFileSet()}
	if m.path, err = modulePath(filepath.Join(root, "go.mod")); err != nil {
		return nil, err
	}
	var names []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(p, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	m.files = make([]goFile, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				m.files[i], errs[i] = m.parse(names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, f := range m.files {
		if !slices.Contains(m.pkgs, f.pkg) {
			m.pkgs = append(m.pkgs, f.pkg)
		}
	}
	slices.Sort(m.pkgs)
	return m, errors.Join(errs...)
}

// parse parses one file; token.FileSet is safe for concurrent use.
func (m *module) parse(name string) (goFile, error) {
	rel, err := filepath.Rel(m.root, name)
	if err != nil {
		return goFile{}, err
	}
	rel = filepath.ToSlash(rel)
	f := goFile{rel: rel, pkg: path.Dir(rel), test: strings.HasSuffix(rel, "_test.go")}
	mode := parser.SkipObjectResolution
	if f.test {
		mode |= parser.ImportsOnly
	}
	f.ast, err = parser.ParseFile(m.fset, name, nil, mode)
	return f, err
}

// skipDir reports whether a directory holds no package of this module:
// testdata, hidden and underscore folders (as the go command ignores
// them), and nested modules (examples/openai-go, deploy/kubernetes/check).
func skipDir(p, name string) bool {
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(p, "go.mod"))
	return err == nil
}

// moduleRoot is the nearest directory at or above the test's that holds
// a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the test's directory")
		}
		dir = parent
	}
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

// ours returns the package an import path names, relative to the module
// root, and whether it is one of this module's.
func (m *module) ours(importPath string) (string, bool) {
	if importPath == m.path {
		return ".", true
	}
	rest, ok := strings.CutPrefix(importPath, m.path+"/")
	return rest, ok
}

// imports lists a file's imports of this module's packages, with the line
// of each.
func (m *module) imports(f goFile) []moduleImport {
	var out []moduleImport
	for _, spec := range f.ast.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		if pkg, ok := m.ours(p); ok {
			out = append(out, moduleImport{pkg: pkg, line: m.fset.Position(spec.Pos()).Line})
		}
	}
	return out
}

type moduleImport struct {
	pkg  string
	line int
}
