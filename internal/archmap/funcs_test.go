package archmap

import (
	"go/ast"
	"testing"
)

// longFuncs are the production functions allowed past MaxFuncLines, by
// file and name, each with the reason it still is: none but work that is
// under way elsewhere.
var longFuncs = map[string]string{}

// TestNoLongFunction fails on a production function (a declared one, or a
// function literal outside any) longer than MaxFuncLines, or in cmd/
// longer than MaxCmdFuncLines.
func TestNoLongFunction(t *testing.T) {
	t.Parallel()
	m := load(t)
	seen := map[string]bool{}
	for _, f := range m.files {
		if f.test {
			continue
		}
		for _, decl := range f.ast.Decls {
			name := "func literal"
			if fd, ok := decl.(*ast.FuncDecl); ok {
				if fd.Body == nil {
					continue
				}
				name = fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) == 1 {
					name = recvName(fd.Recv.List[0].Type) + "." + name
				}
				m.checkLength(t, f, name, decl, seen)
				continue
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					m.checkLength(t, f, name, lit, seen)
					return false
				}
				return true
			})
		}
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Errorf("longFuncs names %s, no longer over its cap: remove it", key)
		}
	}
}

// checkLength reports n, a function of f, if it is longer than its
// package's cap (capOf) and not allowed in longFuncs.
func (m *module) checkLength(t *testing.T, f goFile, name string, n ast.Node, seen map[string]bool) {
	t.Helper()
	from, to := m.fset.Position(n.Pos()).Line, m.fset.Position(n.End()).Line
	lines, most := to-from+1, capOf(f.pkg)
	if lines <= most {
		return
	}
	key := f.rel + ":" + name
	if _, ok := longFuncs[key]; ok {
		seen[key] = true
		return
	}
	t.Errorf("%s:%d: %s is %d lines, more than %d: split it by meaning", f.rel, from, name, lines, most)
}

// capOf is the longest a production function of package pkg may be.
func capOf(pkg string) int {
	if pkg == "cmd" {
		return MaxCmdFuncLines
	}
	return MaxFuncLines
}

// recvName is the type name of a method's receiver.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
