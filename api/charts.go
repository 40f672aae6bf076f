package api

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Charts are drawn on the server as inline SVG: no script, nothing the
// page's Content-Security-Policy has to allow (colours come from the
// stylesheet's classes, never from style attributes). Each chart is an
// image with a title and a description for screen readers, each bar has
// a tooltip, and every page that draws one also gives its figures as a
// table.

// chartSeries is one row of figures; series after the first are drawn
// over it (a share of it, as passes of attempts), narrower.
type chartSeries struct {
	Name   string
	Values []float64
}

// barChart is a bar chart of one or two series over the same labels.
type barChart struct {
	ID     string // unique on the page, for aria ids
	Title  string
	Desc   string
	Labels []string
	Series []chartSeries
	// Percent draws values as percentages with a 0–100 axis.
	Percent bool
}

const (
	chartW, chartH           = 640, 220
	chartLeft, chartRight    = 44, 8
	chartTop, chartBottom    = 12, 36
	chartMaxLabels           = 12
	chartPlotW, chartPlotH   = chartW - chartLeft - chartRight, chartH - chartTop - chartBottom
	chartBarGap, chartInnerW = 0.2, 0.5
)

// SVG draws the chart.
func (c barChart) SVG() template.HTML {
	esc := template.HTMLEscapeString
	n := len(c.Labels)
	top := 0.0
	for _, s := range c.Series {
		for _, v := range s.Values {
			top = math.Max(top, v)
		}
	}
	if top = niceCeil(top); c.Percent {
		top = 100
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-t %s-d" focusable="false">`, chartW, chartH, esc(c.ID), esc(c.ID))
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, esc(c.ID), esc(c.Title), esc(c.ID), esc(c.Desc))
	// the axis: gridlines at 0, half and the top
	for _, f := range []float64{0, 0.5, 1} {
		y := chartTop + chartPlotH*(1-f)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, chartLeft, chartW-chartRight, y, y)
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%.1f" text-anchor="end">%s</text>`, chartLeft-6, y+4, esc(c.format(top*f)))
	}
	if n > 0 {
		slot := float64(chartPlotW) / float64(n)
		every := (n + chartMaxLabels - 1) / chartMaxLabels
		for i, label := range c.Labels {
			x := chartLeft + slot*float64(i)
			for si, s := range c.Series {
				if i >= len(s.Values) {
					continue
				}
				w := slot * (1 - chartBarGap)
				if si > 0 {
					w *= chartInnerW
				}
				h := 0.0
				if top > 0 {
					h = chartPlotH * s.Values[i] / top
				}
				fmt.Fprintf(&b, `<rect class="bar s%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s, %s: %s</title></rect>`,
					si, x+(slot-w)/2, chartTop+chartPlotH-h, w, h, esc(label), esc(s.Name), esc(c.format(s.Values[i])))
			}
			if i%every == 0 {
				fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">%s</text>`, x+slot/2, chartH-chartBottom+16, esc(label))
			}
		}
	}
	if len(c.Series) > 1 { // a legend
		x := chartLeft
		for si, s := range c.Series {
			fmt.Fprintf(&b, `<rect class="bar s%d" x="%d" y="%d" width="10" height="10"/><text class="axis" x="%d" y="%d">%s</text>`,
				si, x, chartH-12, x+14, chartH-3, esc(s.Name))
			x += 24 + 8*len(s.Name)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it is escaped above
}

func (c barChart) format(v float64) string {
	if c.Percent {
		return strconv.FormatFloat(v, 'f', 0, 64) + "%"
	}
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// niceCeil rounds a count up to an even multiple of a power of ten (at
// least 2), so the axis's half-way line is a whole number too.
func niceCeil(v float64) float64 {
	if v <= 2 {
		return 2
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{2, 4, 6, 8, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
