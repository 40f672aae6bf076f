package api

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{0, 2}, {1, 2}, {2, 2}, {3, 4}, {7, 8}, {9, 10}, {10, 20}, {13, 20}, {55, 60}, {100, 200}, {999, 1000}} {
		t.Run(fmt.Sprint(c.in), func(t *testing.T) {
			if got := niceCeil(c.in); got != c.want {
				t.Errorf("niceCeil(%g) = %g, want %g", c.in, got, c.want)
			}
		})
	}
}

// TestChartIsWellFormedAndEscaped: a chart is well-formed XML whatever its
// labels hold, names itself for screen readers, and has one bar per value.
func TestChartIsWellFormedAndEscaped(t *testing.T) {
	for _, c := range []struct {
		name  string
		chart barChart
		bars  int
	}{
		{"empty", barChart{ID: "e", Title: "Nothing"}, 0},
		{"hostile labels", barChart{ID: `x"><script>`, Title: `</title><script>alert(1)</script>`, Desc: "a & b",
			Labels: []string{`<b>`, `"q"`}, Series: []chartSeries{{Name: "A<", Values: []float64{1, 2}}}}, 2},
		{"two series and a legend", barChart{ID: "t", Title: "T", Labels: []string{"a", "b", "c"},
			Series: []chartSeries{{Name: "Attempts", Values: []float64{3, 0, 5}}, {Name: "Passes", Values: []float64{1, 0, 5}}}}, 6 + 2},
		{"percent", barChart{ID: "p", Title: "P", Percent: true, Labels: []string{"1.0.0"}, Series: []chartSeries{{Name: "Rate", Values: []float64{50}}}}, 1},
		{"many labels", barChart{ID: "m", Title: "M", Labels: make([]string, 40), Series: []chartSeries{{Name: "N", Values: make([]float64, 40)}}}, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := string(c.chart.SVG())
			if strings.Contains(svg, "<script") || strings.Contains(svg, "style=") {
				t.Errorf("the chart carries a script or a style attribute: %s", svg)
			}
			d := xml.NewDecoder(strings.NewReader(svg))
			bars, title := 0, false
			for {
				tok, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed: %v\n%s", err, svg)
				}
				if se, ok := tok.(xml.StartElement); ok {
					switch se.Name.Local {
					case "rect":
						bars++
					case "title":
						title = true
					}
				}
			}
			if bars != c.bars || !title {
				t.Errorf("%d rects, title %v; want %d and a title", bars, title, c.bars)
			}
		})
	}
}
