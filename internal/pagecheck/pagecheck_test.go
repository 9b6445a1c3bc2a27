package pagecheck

import (
	"strings"
	"testing"
)

const clean = `<!DOCTYPE html>
<html><head><meta charset="utf-8" /><style>td { color: red; }</style></head>
<body><a href="#t">t</a><table id="t"><thead><tr><th>g</th><th>n</th></tr></thead>
<tbody><tr><th scope="row">A &amp; B</th><td data-value="1200">1,200 ms</td></tr></tbody></table>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><text>x</text></svg>
</body></html>`

func TestParseAndRows(t *testing.T) {
	t.Parallel()
	root, err := Parse([]byte(clean))
	if err != nil {
		t.Fatal(err)
	}
	if err := SelfContained(root); err != nil {
		t.Fatalf("a clean page: %v", err)
	}
	table := root.ByID("t")
	if table == nil {
		t.Fatal("no table t")
	}
	rows := Rows(table)
	want := []Cell{{Text: "A & B", Header: true}, {Text: "1,200 ms", Value: "1200", HasValue: true}}
	if len(rows) != 1 || len(rows[0]) != 2 || rows[0][0] != want[0] || rows[0][1] != want[1] {
		t.Fatalf("rows %+v, want %+v", rows, want)
	}
	if h := Head(table); strings.Join(h, ",") != "g,n" {
		t.Fatalf("head %q", h)
	}
}

func TestParseRefusesBrokenMarkup(t *testing.T) {
	t.Parallel()
	for _, page := range []string{
		`<html><body><p>a <b>b</p></body></html>`,    // misnested
		`<html><body>&nbsp;</body></html>`,           // an HTML entity
		`<html><body><td>AT&T</td></body></html>`,    // a raw ampersand
		`<html><body><p class=x>y</p></body></html>`, // an unquoted attribute
		`<html><body><br></body></html>`,             // an unclosed void element
	} {
		if _, err := Parse([]byte(page)); err == nil {
			t.Errorf("parsed %s", page)
		}
	}
}

func TestSelfContainedFindsEveryLeak(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`<script>alert(1)</script>`,
		`<a href="https://example.com/">x</a>`,
		`<a href="http://example.com/">x</a>`,
		`<a href="//example.com/x">x</a>`,
		`<a href="other.html">x</a>`,
		`<img src="data:image/png;base64,AA" />`,
		`<link rel="stylesheet" href="#x" />`,
		`<p onclick="x()">x</p>`,
		`<p style="background: url(https://example.com/a.png)">x</p>`,
		`<style>@import "https://example.com/a.css";</style>`,
		`<meta http-equiv="refresh" content="0; url=https://example.com/" />`,
		`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="https://example.com/">x</a></svg>`,
	} {
		root, err := Parse([]byte("<html><body>" + body + "</body></html>"))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if SelfContained(root) == nil {
			t.Errorf("SelfContained passed %s", body)
		}
	}
}
