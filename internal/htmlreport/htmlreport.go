// Package htmlreport renders a report page - a summary table coloured by
// outcome, lists of findings side by side, grouped bar charts and links -
// as one self-contained HTML file: inline CSS, inline SVG drawn from the
// data, no script and nothing fetched. Its Content-Security-Policy allows
// nothing but inline style, so a page that tried to load anything would
// say so in the browser's console (the browser test reads it).
//
// The compare report and the engine matrix fill a Page from their own
// models; this package knows nothing of gauntlet's.
package htmlreport

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

// Page is one report.
type Page struct {
	Title string
	// Lead is the paragraph under the title.
	Lead string
	// Facts are short label: value pairs shown as a strip under the lead.
	Facts    []Fact
	Summary  Table
	Sections []Section
}

// Fact is one label and its value.
type Fact struct{ Label, Value string }

// Table is a table whose first column heads its rows.
type Table struct {
	Caption string
	Head    []string
	Rows    []Row
	// Legend explains the cell classes used, in order.
	Legend []Cell
}

// Row is one table row.
type Row struct {
	Head  Cell
	Cells []Cell
}

// Cell is one table cell. Class colours it: pass, fail, notrun,
// notapplicable, new, removed, shared, same, unsteady, or empty.
type Cell struct {
	Text, Class, Href, Title string
	// Mark is a short badge after the text ("+req").
	Mark string
}

// Section is a headed part of the page: any of a paragraph, items side
// by side, charts, a table and links.
type Section struct {
	ID, Heading, Intro string
	// Empty is said when the section has nothing else.
	Empty  string
	Items  []Item
	Charts []ChartGroup
	Table  *Table
	Links  []Link
}

// Item is one finding with its sides next to each other. Class colours
// it (new, removed, shared, same, unsteady); Badge is the word on it,
// the class itself when empty.
type Item struct {
	Class, Badge, Title, What string
	Sides                     []Column
}

// Column is one side of an item.
type Column struct {
	Heading, Href string
	Lines         []string
}

// Link is a labelled link.
type Link struct{ Label, Href string }

// ChartGroup is charts shown side by side under one title.
type ChartGroup struct {
	Title  string
	Charts []Chart
	Links  []Link
}

// Chart is a grouped horizontal bar chart: one group per label, one bar
// per series in each. The page has colours for nine series.
type Chart struct {
	Title, Unit string
	Series      []string
	Groups      []Group
}

// Group is one label's values, one per series; NaN is a series with no
// value there, drawn as n/a.
type Group struct {
	Label  string
	Values []float64
}

// Write renders the page.
func Write(w io.Writer, p Page) error {
	var b bytes.Buffer
	if err := page.Execute(&b, p); err != nil {
		return fmt.Errorf("htmlreport: %s: %w", p.Title, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Geometry of a chart, in SVG user units.
const (
	labelW = 150.0
	barsW  = 330.0
	valueW = 70.0
	barH   = 9.0
	barGap = 2.0
	rowGap = 8.0
	headH  = 4.0
)

type svgChart struct {
	Title, Unit    string
	Width, Height  float64
	Series         []string
	Labels         []svgText
	Bars           []svgBar
	Ticks          []svgTick
	Bars0, BarsEnd float64
}

type svgText struct {
	X, Y float64
	Text string
}

type svgBar struct {
	X, Y, W, H float64
	Series     int
	Value      string
	VX         float64
	Title      string
}

type svgTick struct {
	X    float64
	Text string
}

// layout places a chart's bars: widths scale to the largest value, each
// group is one band with its series' bars stacked in it.
func layout(c Chart) svgChart {
	s := svgChart{Title: c.Title, Unit: c.Unit, Series: c.Series, Width: labelW + barsW + valueW, Bars0: labelW, BarsEnd: labelW + barsW}
	top := 0.0
	for _, g := range c.Groups {
		for _, v := range g.Values {
			if !math.IsNaN(v) {
				top = math.Max(top, v)
			}
		}
	}
	scale := 0.0
	if top > 0 {
		// Ticks every 1, 2 or 5 times a power of ten, at most five of them.
		step := niceCeil(top / 5)
		end := step * math.Ceil(top/step)
		scale = barsW / end
		for v := 0.0; v <= end+step/2; v += step {
			s.Ticks = append(s.Ticks, svgTick{X: labelW + v*scale, Text: short(v)})
		}
	}
	y := headH
	for _, g := range c.Groups {
		band := float64(len(g.Values))*(barH+barGap) - barGap
		s.Labels = append(s.Labels, svgText{X: labelW - 6, Y: y + band/2 + 3.5, Text: g.Label})
		for i, v := range g.Values {
			w := v * scale
			if v > 0 && w < 1 {
				w = 1 // a value is never drawn as nothing
			}
			name := ""
			if i < len(c.Series) {
				name = c.Series[i]
			}
			value, unit := short(v), c.Unit
			if math.IsNaN(v) {
				// A series that has no value here (a side that did not
				// run the stage) reads n/a, never a bar of 0.
				w, value, unit = 0, "n/a", ""
			}
			s.Bars = append(s.Bars, svgBar{X: labelW, Y: y, W: round(w), H: barH, Series: i % 9, Value: value,
				VX: labelW + w + 4, Title: strings.TrimSpace(fmt.Sprintf("%s · %s: %s %s", g.Label, name, value, unit))})
			y += barH + barGap
		}
		y += rowGap - barGap
	}
	s.Height = y + 16
	return s
}

// niceCeil is the smallest 1, 2 or 5 times a power of ten not below v.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func round(v float64) float64 { return math.Round(v*10) / 10 }

// short prints a value: whole numbers as they are, thousands as "1.2k".
func short(v float64) string {
	switch {
	case v >= 10000:
		return strconv.FormatFloat(math.Round(v/1000), 'f', -1, 64) + "k"
	case v >= 1000:
		return strconv.FormatFloat(math.Round(v/100)/10, 'f', -1, 64) + "k"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"layout": layout,
	"f":      func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
	"add":    func(a, b float64) float64 { return a + b },
	"sub":    func(a, b float64) float64 { return a - b },
	"mod":    func(i int) int { return i % 9 },
}).Parse(pageTemplate))
