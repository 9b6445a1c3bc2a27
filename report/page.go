package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"io"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Page is a report as one self-contained HTML page (WritePage): a title,
// a lead paragraph and sections. It holds texts, tables and charts only,
// so what a page shows is what the files beside it publish.
type Page struct {
	Title    string
	Lead     Text
	Sections []Section
	// Footer is the closing line: what the page is and is not.
	Footer Text
}

// Section is a part of a page under its own heading, linked from the
// page's contents by its ID.
type Section struct {
	ID      string // the fragment: lower-case letters, digits and -
	Heading string
	Blocks  []Block
}

// Block is one paragraph, list, table or chart of a section; exactly one
// field is set.
type Block struct {
	Para   Text
	List   []Text
	Table  *Table
	Figure *Figure
}

// markdown renders a paragraph or a table as summary.md writes them.
func (b Block) markdown() string {
	switch {
	case b.Table != nil:
		return b.Table.markdown()
	case len(b.List) > 0:
		var s strings.Builder
		for _, item := range b.List {
			s.WriteString("- " + item.markdown() + "\n")
		}
		return s.String()
	}
	return b.Para.markdown() + "\n"
}

// Figure is a chart drawn inline, as SVG.
type Figure struct {
	// Caption says what the chart shows; it is also the chart's accessible
	// name.
	Caption string
	// Draw draws the chart in format, an SVG format of this package's
	// (one of its chart functions): the page holds the chart drawn for a
	// wide screen and for a phone, and shows the one that fits.
	Draw func(w io.Writer, format ImageFormat) error
}

// WritePage writes p as one HTML document that needs nothing else: its
// style is inline, its charts are inline SVG, it holds no script and
// refers to no other file or address. Every text is escaped by
// html/template, group labels and policy names included.
func WritePage(w io.Writer, p *Page) error {
	v := pageView{Title: p.Title, Lead: p.Lead, Footer: p.Footer}
	ids := map[string]bool{}
	id := func(id string) error {
		if !validID(id) {
			return fmt.Errorf("id %q is not lower-case letters, digits and -", id)
		}
		if ids[id] {
			return fmt.Errorf("id %q is used twice", id)
		}
		ids[id] = true
		return nil
	}
	figures := drawFigures(p)
	for _, s := range p.Sections {
		if err := id(s.ID); err != nil {
			return fmt.Errorf("page section %q: %w", s.Heading, err)
		}
		sv := sectionView{ID: s.ID, Heading: s.Heading}
		for _, b := range s.Blocks {
			if b.Table != nil && b.Table.ID != "" {
				if err := id(b.Table.ID); err != nil {
					return fmt.Errorf("page section %q: table: %w", s.Heading, err)
				}
			}
			bv, err := viewBlock(b, figures[b.Figure])
			if err != nil {
				return fmt.Errorf("page section %q: %w", s.Heading, err)
			}
			sv.Blocks = append(sv.Blocks, bv)
		}
		v.Sections = append(v.Sections, sv)
	}
	return pageTemplate.Execute(w, v)
}

// looksNumeric: c shows a number ("40 (100%)", "819 ms") or the dash of a
// missing one.
func looksNumeric(c Text) bool {
	if len(c) != 1 || c[0].Code || c[0].Label {
		return false
	}
	r, _ := utf8.DecodeRuneInString(c[0].Text)
	return unicode.IsDigit(r) || c[0].Text == missing[0].Text
}

func validID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

type pageView struct {
	Title    string
	Lead     Text
	Sections []sectionView
	Footer   Text
}

type sectionView struct {
	ID, Heading string
	Blocks      []blockView
}

type blockView struct {
	Para   Text
	List   []Text
	Table  *tableView
	Figure *figureView
}

type tableView struct {
	ID   string
	Head []headView
	Rows [][]cellView
	// Class is the table box's: "table-wrap", with "many" when the table
	// has more columns than a phone shows at once (it then says it
	// scrolls), and "dense" when it has so many that a desktop needs it
	// set tighter (tableClass).
	Class string
	Many  bool
}

// Column counts from which a table is set apart (tableClass): past
// manyColumns a phone (390 px) scrolls it sideways, and says so; from
// denseColumns it is set smaller, its text cells wrapping, so that it
// fits a desktop's 1280 px.
const (
	manyColumns  = 3
	denseColumns = 10
)

// tableClass is the class of a table's box for its number of columns.
func tableClass(columns int) (class string, many bool) {
	class, many = "table-wrap", columns > manyColumns
	if many {
		class += " many"
	}
	if columns >= denseColumns {
		class += " dense"
	}
	return class, many
}

// headView is a column's header, right-aligned over a column of numbers.
type headView struct {
	Text    Text
	Numeric bool
}

// cellView is a table cell: the first of a row is its header; a cell that
// shows one number carries it, as the CSVs write it, in data-value.
type cellView struct {
	Text     Text
	Value    string
	HasValue bool
	Numeric  bool // in a column of numbers: right-aligned
}

type figureView struct {
	Caption      string
	Wide, Narrow template.HTML
}

// viewBlock is b for the page template; drawn is b's figure, drawn
// (drawFigures), when it has one.
func viewBlock(b Block, drawn *drawnFigure) (blockView, error) {
	v := blockView{Para: b.Para, List: b.List}
	if t := b.Table; t != nil {
		tv := &tableView{ID: t.ID}
		tv.Class, tv.Many = tableClass(len(t.Head))
		for i, h := range t.Head {
			tv.Head = append(tv.Head, headView{Text: h, Numeric: i > 0 && len(t.Rows) > 0})
		}
		for _, row := range t.Rows {
			cells := make([]cellView, len(row))
			for i, c := range row {
				val, ok := c.value()
				cells[i] = cellView{Text: c, Value: val, HasValue: ok}
				if i < len(tv.Head) && !ok && !looksNumeric(c) {
					tv.Head[i].Numeric = false
				}
			}
			tv.Rows = append(tv.Rows, cells)
		}
		// A column of numbers is right-aligned, header included.
		for _, row := range tv.Rows {
			for i := range row {
				row[i].Numeric = i < len(tv.Head) && tv.Head[i].Numeric
			}
		}
		v.Table = tv
	}
	if f := b.Figure; f != nil {
		if err := cmp.Or(drawn.errs[0], drawn.errs[1]); err != nil {
			return v, fmt.Errorf("chart %q: %w", f.Caption, err)
		}
		v.Figure = &drawn.figureView
	}
	return v, nil
}

// drawnFigure is a figure of a page drawn for it, for a wide screen and
// for a phone, or why each could not be.
type drawnFigure struct {
	figureView
	errs [2]error
}

// drawFigures draws every figure of p, for a wide screen and a phone, at
// once, at most as many charts at a time as there are cores: charts are
// most of a page's time, and each is drawn apart from the others.
func drawFigures(p *Page) map[*Figure]*drawnFigure {
	drawn := map[*Figure]*drawnFigure{}
	type chart struct {
		f *Figure
		d *drawnFigure
		i int // 0 wide, 1 narrow
	}
	var charts []chart
	for _, s := range p.Sections {
		for _, b := range s.Blocks {
			if f := b.Figure; f != nil && drawn[f] == nil {
				d := &drawnFigure{figureView: figureView{Caption: f.Caption}}
				drawn[f] = d
				charts = append(charts, chart{f, d, 0}, chart{f, d, 1})
			}
		}
	}
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, c := range charts {
		cores <- struct{}{}
		wg.Go(func() {
			defer func() { <-cores }()
			format, svg := wideSVG, &c.d.Wide
			if c.i == 1 {
				format, svg = narrowSVG, &c.d.Narrow
			}
			var buf bytes.Buffer
			if c.d.errs[c.i] = c.f.Draw(&buf, format); c.d.errs[c.i] == nil {
				*svg, c.d.errs[c.i] = inlineSVG(buf.Bytes(), c.f.Caption)
			}
		})
	}
	wg.Wait()
	return drawn
}

// inlineSVG turns an SVG document drawn by gonum/plot into an element to
// put in a page: the XML declaration and comment before the root are
// dropped, and the root is named for assistive technology. The document
// is trusted: gonum/plot escapes every text it draws (group labels in a
// legend included), and it refers to no other file.
func inlineSVG(doc []byte, name string) (template.HTML, error) {
	i := bytes.Index(doc, []byte("<svg"))
	if i < 0 {
		return "", errors.New("not an SVG document")
	}
	root := doc[i+len("<svg"):]
	attrs := ` role="img" aria-label="` + template.HTMLEscapeString(name) + `"`
	return template.HTML("<svg" + attrs + string(bytes.TrimRight(root, "\n"))), nil
}

// pageStyle is the page's only style sheet. It keeps to one column that is
// readable from a phone (390 px) to a desktop: tables scroll sideways in
// their own box, charts scale to the column. Charts keep a white ground in
// the dark scheme, as their colours are chosen for it.
const pageStyle = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --line: #d0d7de; --head: #f3f5f7; --accent: #0b5cad; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0f1216; --line: #3a424c; --head: #1a1f26; --accent: #6cb6ff; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; }
.page { max-width: 1344px; margin: 0 auto; padding: 24px 32px 40px; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0 0 0.5rem; }
h2 { font-size: 1.3rem; margin: 2.25rem 0 0.75rem; padding-bottom: 0.3rem; border-bottom: 1px solid var(--line); }
p, ul { max-width: 60rem; }
p { margin: 0.6rem 0; }
.lead { color: var(--muted); }
nav ul { list-style: none; padding: 0; margin: 1rem 0 0; display: flex; flex-wrap: wrap; gap: 0.35rem 1.1rem; max-width: none; }
a { color: var(--accent); }
code { font: 0.9em/1.3 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; background: var(--head); border-radius: 4px; padding: 0.05em 0.3em; white-space: nowrap; }
.table-wrap { overflow-x: auto; width: fit-content; max-width: 100%; margin: 0.9rem 0; border: 1px solid var(--line); border-radius: 6px;
  /* Scroll shadows: an edge with more columns past it is shaded (the
     covers scroll with the table, the shades stay with the box). */
  background:
    linear-gradient(to right, var(--bg) 40%, transparent) left center / 2.5rem 100% no-repeat local,
    linear-gradient(to left, var(--bg) 40%, transparent) right center / 2.5rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.3), transparent) left center / 0.9rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.3), transparent) right center / 0.9rem 100% no-repeat scroll,
    var(--bg); }
.scroll-hint { display: none; margin: 0.9rem 0 -0.6rem; color: var(--muted); font-size: 0.85rem; }
.dense table { font-size: 0.8rem; }
.dense th, .dense td { padding: 0.3rem 0.4rem; }
.dense td:not(.num), .dense tbody th { white-space: normal; min-width: 5em; }
table { border-collapse: separate; border-spacing: 0; font-variant-numeric: tabular-nums; font-size: 0.95rem; }
th, td { padding: 0.4rem 0.75rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; white-space: nowrap; }
thead th { background: var(--head); font-weight: 600; white-space: normal; vertical-align: bottom; }
th code { background: none; padding: 0; }
tbody tr:last-child th, tbody tr:last-child td { border-bottom: 0; }
tbody th { font-weight: 600; white-space: nowrap; background: var(--bg); }
td:last-child:not(.num) { white-space: normal; }
.num { text-align: right; }
figure { margin: 1rem 0 1.5rem; }
.chart { background: #ffffff; border: 1px solid var(--line); border-radius: 6px; padding: 4px; max-width: 1000px; }
.chart svg { display: block; width: 100%; max-width: 100%; height: auto; }
.chart .narrow { display: none; }
.chart svg text { font-family: "Liberation Sans", Arimo, Arial, Helvetica, sans-serif !important; }
figcaption { color: var(--muted); font-size: 0.92rem; margin-top: 0.4rem; }
footer { margin-top: 2.5rem; padding-top: 0.75rem; border-top: 1px solid var(--line); color: var(--muted); font-size: 0.9rem; }
@media (max-width: 600px) {
  body { font-size: 15px; }
  .page { padding: 14px 12px 28px; }
  h1 { font-size: 1.4rem; }
  h2 { font-size: 1.15rem; margin-top: 1.75rem; }
  th, td { padding: 0.35rem 0.5rem; }
  table { font-size: 0.9rem; }
  tbody th { white-space: normal; min-width: 9em; }
  td:not(.num) { white-space: normal; min-width: 7em; }
  /* The row names stay in view while a wide table scrolls; a sticky cell
     draws its rules as shadows, as Chromium leaves its borders out. */
  tbody th, thead th:first-child { position: sticky; left: 0; border-bottom-color: transparent; box-shadow: inset 0 -1px 0 var(--line), inset -1px 0 0 var(--line); }
  tbody tr:last-child th { box-shadow: inset -1px 0 0 var(--line); }
  .dense table { font-size: 0.85rem; }
  .many tbody th, .many thead th:first-child { box-shadow: inset 0 -1px 0 var(--line), inset -1px 0 0 var(--line), 3px 0 4px -2px rgba(0, 0, 0, 0.25); }
  .scroll-hint { display: block; }
  .chart .wide { display: none; }
  .chart .narrow { display: block; }
}
`

// The template writes well-formed XML as well as HTML (void elements
// closed, no named entity), so a test can read a page with encoding/xml.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<meta name="color-scheme" content="light dark" />
<title>{{.Title}}</title>
<style>` + pageStyle + `</style>
</head>
<body>
<div class="page">
<header>
<h1>{{.Title}}</h1>
{{- with .Lead}}
<p class="lead">{{template "text" .}}</p>
{{- end}}
<nav aria-label="Contents"><ul>
{{- range .Sections}}
<li><a href="#{{.ID}}">{{.Heading}}</a></li>
{{- end}}
</ul></nav>
</header>
<main>
{{- range .Sections}}
<section id="{{.ID}}">
<h2>{{.Heading}}</h2>
{{- range .Blocks}}
{{- with .Para}}
<p>{{template "text" .}}</p>
{{- end}}
{{- with .List}}
<ul>
{{- range .}}
<li>{{template "text" .}}</li>
{{- end}}
</ul>
{{- end}}
{{- with .Table}}
{{- if .Many}}
<p class="scroll-hint" aria-hidden="true">Scroll the table sideways for more columns →</p>
{{- end}}
<div class="{{.Class}}"><table{{with .ID}} id="{{.}}"{{end}}>
<thead><tr>{{range .Head}}<th scope="col"{{if .Numeric}} class="num"{{end}}>{{template "text" .Text}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}{{if eq $i 0}}<th scope="row">{{template "text" $c.Text}}</th>{{else}}<td{{if $c.Numeric}} class="num"{{end}}{{if $c.HasValue}} data-value="{{$c.Value}}"{{end}}>{{template "text" $c.Text}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- with .Figure}}
<figure>
<div class="chart"><div class="wide">{{.Wide}}</div><div class="narrow">{{.Narrow}}</div></div>
<figcaption>{{.Caption}}</figcaption>
</figure>
{{- end}}
{{- end}}
</section>
{{- end}}
</main>
{{- with .Footer}}
<footer><p>{{template "text" .}}</p></footer>
{{- end}}
</div>
</body>
</html>
{{define "text"}}{{range .}}{{if .Code}}<code>{{.Text}}</code>{{else}}{{.Text}}{{end}}{{end}}{{end}}`))
