// Package pagecheck reads a report page (report.html) for tests: it parses
// the page strictly as XML — the report's template writes well-formed
// markup, so a page an injected label broke does not parse — and checks
// that the page needs nothing from anywhere else. It uses encoding/xml
// only, so the module needs no HTML parser. Tests import it; nothing else
// may.
package pagecheck

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Node is an element of a page, or a run of its text (Name empty).
type Node struct {
	Name     string // local name: "table", "td", "svg"
	Attr     []xml.Attr
	Children []*Node
	Text     string // for a text node
}

// Parse reads a page strictly: every element closed, only XML's five
// named entities, attributes quoted. The doctype is skipped.
func Parse(page []byte) (*Node, error) {
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	root := &Node{Name: "#document"}
	stack := []*Node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("page is not well-formed: %w", err)
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			n := &Node{Name: t.Name.Local, Attr: t.Attr}
			top.Children = append(top.Children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.Children = append(top.Children, &Node{Text: string(t)})
		}
	}
	if len(root.Children) == 0 {
		return nil, fmt.Errorf("page has no element")
	}
	return root, nil
}

// Get returns the value of the attribute named name (local name), and
// whether there is one.
func (n *Node) Get(name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Name.Local == name && a.Name.Space != "xmlns" {
			return a.Value, true
		}
	}
	return "", false
}

// All returns every element under n (n included) for which match holds,
// in document order.
func (n *Node) All(match func(*Node) bool) []*Node {
	var out []*Node
	var walk func(*Node)
	walk = func(m *Node) {
		if m.Name != "" && match(m) {
			out = append(out, m)
		}
		for _, c := range m.Children {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Named returns every element called name under n.
func (n *Node) Named(name string) []*Node {
	return n.All(func(m *Node) bool { return m.Name == name })
}

// ByID returns the element whose id is id, or nil.
func (n *Node) ByID(id string) *Node {
	found := n.All(func(m *Node) bool { v, ok := m.Get("id"); return ok && v == id })
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// Content is the text under n, as a reader sees it: runs joined, spaces
// collapsed.
func (n *Node) Content() string {
	var b strings.Builder
	var walk func(*Node)
	walk = func(m *Node) {
		b.WriteString(m.Text)
		for _, c := range m.Children {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// Cell is a cell of a table body: its text and its data-value.
type Cell struct {
	Text     string
	Value    string
	HasValue bool
	Header   bool // a th: the row's name
}

// Rows returns the cells of table's body, row by row.
func Rows(table *Node) [][]Cell {
	var out [][]Cell
	for _, body := range table.Named("tbody") {
		for _, tr := range body.Named("tr") {
			var row []Cell
			for _, c := range tr.Children {
				if c.Name != "th" && c.Name != "td" {
					continue
				}
				v, ok := c.Get("data-value")
				row = append(row, Cell{Text: c.Content(), Value: v, HasValue: ok, Header: c.Name == "th"})
			}
			out = append(out, row)
		}
	}
	return out
}

// Head returns the texts of table's header cells.
func Head(table *Node) []string {
	var out []string
	for _, th := range table.Named("thead") {
		for _, c := range th.Named("th") {
			out = append(out, c.Content())
		}
	}
	return out
}

// fetching are the elements that run code or load something, which a
// self-contained page has none of.
var fetching = map[string]bool{
	"script": true, "iframe": true, "object": true, "embed": true, "link": true, "base": true,
	"img": true, "image": true, "use": true, "video": true, "audio": true, "source": true,
	"form": true, "frame": true, "frameset": true, "portal": true, "foreignObject": true,
}

// referring are the attributes that name an address.
var referring = map[string]bool{
	"src": true, "href": true, "action": true, "formaction": true, "poster": true,
	"srcset": true, "data": true, "background": true, "ping": true, "manifest": true,
}

// SelfContained returns the first thing on the page that runs a script or
// reaches outside it: an element that runs or loads (script, img, link…),
// an event handler attribute, an address other than a fragment of the
// page (#id) in src, href and the like (http:, https:, //, a file), a CSS
// url() or @import, a meta refresh. nil when there is none.
func SelfContained(root *Node) error {
	var problem error
	root.All(func(n *Node) bool {
		if problem != nil {
			return false
		}
		if fetching[n.Name] {
			problem = fmt.Errorf("a <%s> element", n.Name)
			return false
		}
		for _, a := range n.Attr {
			name := strings.ToLower(a.Name.Local)
			switch {
			case a.Name.Space == "xmlns" || name == "xmlns":
				// a namespace name, never fetched
			case strings.HasPrefix(name, "on"):
				problem = fmt.Errorf("<%s %s=%q>: an event handler", n.Name, a.Name.Local, a.Value)
			case referring[name] && !strings.HasPrefix(a.Value, "#"):
				problem = fmt.Errorf("<%s %s=%q>: an address outside the page", n.Name, a.Name.Local, a.Value)
			case name == "style" && !cssSelfContained(a.Value):
				problem = fmt.Errorf("<%s style=%q>: CSS that loads", n.Name, a.Value)
			case name == "http-equiv":
				problem = fmt.Errorf("<%s http-equiv=%q>", n.Name, a.Value)
			}
		}
		if n.Name == "style" && !cssSelfContained(n.Content()) {
			problem = fmt.Errorf("a style sheet that loads (url() or @import)")
		}
		return false
	})
	return problem
}

func cssSelfContained(css string) bool {
	css = strings.ToLower(css)
	return !strings.Contains(css, "url(") && !strings.Contains(css, "@import")
}
