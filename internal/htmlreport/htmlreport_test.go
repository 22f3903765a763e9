package htmlreport

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestChartsDrawEveryBarOnNiceTicks(t *testing.T) {
	c := layout(Chart{Title: "t", Series: []string{"a", "b", "c"}, Groups: []Group{
		{Label: "x", Values: []float64{0, 0.02, 37}}, {Label: "y", Values: []float64{12, 5, 1}}}})
	if len(c.Bars) != 6 || len(c.Labels) != 2 {
		t.Fatalf("%d bars, %d labels", len(c.Bars), len(c.Labels))
	}
	var ticks []string
	for _, tk := range c.Ticks {
		ticks = append(ticks, tk.Text)
	}
	if got := strings.Join(ticks, " "); got != "0 10 20 30 40" {
		t.Errorf("ticks %s", got)
	}
	if c.Bars[0].W != 0 || c.Bars[1].W != 1 || c.Bars[2].W <= c.Bars[3].W {
		t.Errorf("a zero is not drawn, a small value is at least a pixel, widths scale: %+v", c.Bars[:4])
	}
}

func TestThePageEscapesWhatItIsGiven(t *testing.T) {
	var b bytes.Buffer
	p := Page{Title: "<script>x</script>", Summary: Table{Head: []string{"s"}, Rows: []Row{{Head: Cell{Text: "e"}, Cells: []Cell{{Text: "<b>", Class: "new", Href: "javascript:alert(1)"}}}}}}
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>x") || strings.Contains(b.String(), "<b>") || strings.Contains(b.String(), "javascript:") {
		t.Errorf("unescaped input in the page:\n%s", b.String())
	}
	if !strings.Contains(b.String(), `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`) {
		t.Errorf("the page lost its Content-Security-Policy")
	}
}

// TestNoValueIsNA: a series without a value in a group is drawn n/a, with
// no bar, and does not set the scale.
func TestNoValueIsNA(t *testing.T) {
	s := layout(Chart{Title: "t", Unit: "s", Series: []string{"build", "stock"}, Groups: []Group{{Label: "migrate", Values: []float64{4, math.NaN()}}}})
	if len(s.Bars) != 2 || s.Bars[1].Value != "n/a" || s.Bars[1].W != 0 || s.Bars[1].Title != "migrate · stock: n/a" || s.Bars[0].W != barsW {
		t.Errorf("bars %+v", s.Bars)
	}
}
