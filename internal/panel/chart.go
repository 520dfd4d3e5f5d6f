package panel

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Charts are drawn on the server as SVG (no script, nothing loaded from
// elsewhere): stacked bars and lines over one slot per day, with a value
// axis, day labels and a legend. The SVG has a title (its accessible
// name) and every bar and point its own title; the same figures are in a
// table beside it, for screen readers and for copying. The layout's
// "chart" template draws a chart.

type chart struct {
	// ID makes the ids of the SVG's title and description unique on a page.
	ID            string
	Width, Height float64
	Half          bool
	// Title is the chart's accessible name; Summary says what it shows in
	// one sentence (under the chart, and its description).
	Title   string
	Summary string
	Bars    []chartBar
	Lines   []chartPath
	Dots    []chartDot
	Grid    []chartLine
	Labels  []chartLabel
	Legend  []chartSeries
	// PlotLeft, PlotRight and LabelY place the axis lines and day labels.
	PlotLeft, PlotRight, LabelY float64
	// Columns and Rows are the figures as a table: one row per slot that
	// has any (newest first), one column per series.
	Columns []string
	Rows    []chartRow
	// Empty: every value is zero.
	Empty bool
}

type chartBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type chartPath struct {
	Points string
	Class  string
}

type chartDot struct {
	X, Y  float64
	Class string
	Title string
}

type chartLine struct {
	Y     float64
	Label string
	Zero  bool
}

type chartLabel struct {
	X    float64
	Text string
	// Anchor aligns the text on X: middle, or end for the last label,
	// which would otherwise run past the chart's edge.
	Anchor string
}

type chartSeries struct {
	Name  string
	Class string
	Total string
	Line  bool
}

type chartRow struct {
	Label string
	Cells []string
}

// chartInput is one series: a value per slot. Bars stack in the order
// given, bottom to top; a Line is drawn over them on the same scale.
type chartInput struct {
	Name   string
	Class  string
	Values []float64
	Line   bool
}

// chartSpec is what a chart shows.
type chartSpec struct {
	ID, Title string
	// Slots label the slots, left to right; every labelEvery-th and the
	// last are written under the axis.
	Slots      []string
	LabelEvery int
	Series     []chartInput
	// Format writes a value (axis, titles, table); Whole marks values
	// that are counts, whose axis stays on whole numbers.
	Format func(float64) string
	Whole  bool
	// Unit follows a value in a bar's or point's title ("messages").
	Unit string
	// Half: the chart shares its row with another, so it is drawn
	// narrower (its text then stays as large as a full chart's).
	Half bool
}

const (
	chartW, chartH    = 720.0, 240.0
	halfW             = 480.0
	padLeft, padRight = 52.0, 8.0
	padTop, padBottom = 12.0, 28.0
	barGap            = 0.25 // share of a slot left empty
	labelEvery        = 5
	chartMinScale     = 4
	plotH             = chartH - padTop - padBottom
)

// drawChart lays a chart out.
func drawChart(sp chartSpec) chart {
	if sp.Format == nil {
		sp.Format = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	}
	if sp.LabelEvery <= 0 {
		sp.LabelEvery = labelEvery
	}
	n := len(sp.Slots)
	width := chartW
	if sp.Half {
		width = halfW
	}
	plotW := width - padLeft - padRight
	c := chart{ID: sp.ID, Title: sp.Title, Width: width, Height: chartH, Half: sp.Half, PlotLeft: padLeft, PlotRight: width - padRight,
		LabelY: chartH - 8, Empty: true}
	// The scale: the highest stack or point, and the lowest (bars of a
	// single series, such as a margin, may be below zero).
	hi, lo := 0.0, 0.0
	for i := range n {
		up, down := 0.0, 0.0
		for _, s := range sp.Series {
			v := at(s.Values, i)
			if v != 0 {
				c.Empty = false
			}
			switch {
			case s.Line:
				hi, lo = math.Max(hi, v), math.Min(lo, v)
			case v >= 0:
				up += v
			default:
				down += v
			}
		}
		hi, lo = math.Max(hi, up), math.Min(lo, down)
	}
	top, bottom := scaleOf(hi, sp.Whole), 0.0
	if lo < 0 {
		bottom = -scaleOf(-lo, sp.Whole)
	}
	y := func(v float64) float64 { return round1(padTop + plotH*(top-v)/(top-bottom)) }
	slot := plotW / float64(max(n, 1))
	for i, label := range sp.Slots {
		x := padLeft + float64(i)*slot + slot*barGap/2
		w := slot * (1 - barGap)
		up, down := 0.0, 0.0
		for _, s := range sp.Series {
			v := at(s.Values, i)
			if s.Line || v == 0 {
				continue
			}
			from := up
			if v < 0 {
				from = down
			}
			y0, y1 := y(from), y(from+v)
			if v > 0 {
				up += v
			} else {
				down += v
			}
			c.Bars = append(c.Bars, chartBar{X: round1(x), Y: math.Min(y0, y1), W: round1(w), H: round1(math.Abs(y0 - y1)),
				Class: s.Class, Title: label + ": " + sp.Format(v) + " " + strings.TrimSpace(sp.Unit+" "+s.Name)})
		}
		switch {
		case i == n-1:
			c.Labels = append(c.Labels, chartLabel{X: round1(x + w), Text: label, Anchor: "end"})
		case i%sp.LabelEvery == 0 && n-1-i >= sp.LabelEvery:
			c.Labels = append(c.Labels, chartLabel{X: round1(x + w/2), Text: label, Anchor: "middle"})
		}
	}
	for _, s := range sp.Series {
		if !s.Line {
			continue
		}
		var pts []string
		for i, label := range sp.Slots {
			x := round1(padLeft + float64(i)*slot + slot/2)
			v := at(s.Values, i)
			pts = append(pts, strconv.FormatFloat(x, 'f', -1, 64)+","+strconv.FormatFloat(y(v), 'f', -1, 64))
			c.Dots = append(c.Dots, chartDot{X: x, Y: y(v), Class: s.Class, Title: label + ": " + sp.Format(v) + " " + strings.TrimSpace(sp.Unit+" "+s.Name)})
		}
		c.Lines = append(c.Lines, chartPath{Points: strings.Join(pts, " "), Class: s.Class})
	}
	for _, v := range []float64{bottom, bottom / 2, 0, top / 2, top} {
		if v == 0 && len(c.Grid) > 0 && c.Grid[len(c.Grid)-1].Zero || v < 0 && bottom == 0 {
			continue
		}
		c.Grid = append(c.Grid, chartLine{Y: y(v), Label: sp.Format(v), Zero: v == 0})
	}
	for _, s := range sp.Series {
		sum := 0.0
		for _, v := range s.Values {
			sum += v
		}
		c.Legend = append(c.Legend, chartSeries{Name: s.Name, Class: s.Class, Total: sp.Format(sum), Line: s.Line})
		c.Columns = append(c.Columns, s.Name)
	}
	for i := n - 1; i >= 0; i-- {
		row := chartRow{Label: sp.Slots[i]}
		any := false
		for _, s := range sp.Series {
			v := at(s.Values, i)
			any = any || v != 0
			row.Cells = append(row.Cells, sp.Format(v))
		}
		if any {
			c.Rows = append(c.Rows, row)
		}
	}
	return c
}

func at(vs []float64, i int) float64 {
	if i < len(vs) {
		return vs[i]
	}
	return 0
}

// scaleOf is the top of an axis that holds v: a round figure whose half is
// round too.
func scaleOf(v float64, whole bool) float64 {
	if whole {
		return float64(niceCeil(max(int(math.Ceil(v)), chartMinScale)))
	}
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 4, 6, 8, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceCeil rounds up to 1, 2, 4, 6 or 8 times a power of ten, for axis labels
// that halve evenly.
func niceCeil(n int) int {
	if n <= 2 {
		return 2
	}
	p := math.Pow(10, math.Floor(math.Log10(float64(n))))
	for _, m := range []float64{1, 2, 4, 6, 8, 10} {
		if v := int(m * p); v >= n && v%2 == 0 {
			return v
		}
	}
	return int(10 * p)
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// chartDays are the days of a chart from since (midnight UTC), with
// their labels.
func chartDays(since time.Time, days int) []string {
	out := make([]string, days)
	for i := range out {
		out[i] = since.AddDate(0, 0, i).Format("Jan 2")
	}
	return out
}

// dayIndex is the slot of day in a chart that starts at since, or -1.
func dayIndex(day, since time.Time, days int) int {
	i := int(day.Sub(since).Hours() / 24)
	if day.Before(since) || i >= days {
		return -1
	}
	return i
}

// creditsOf writes micro-credits as credits, for axes and titles.
func creditsOf(v float64) string {
	return strconv.FormatFloat(ledger.Credits(int64(math.Round(v))), 'f', -1, 64)
}

func wholeOf(v float64) string { return thousands(int64(math.Round(v))) }

// chartChannels are the usage chart's series, bottom to top; Class picks
// the colour in the style sheet.
var chartChannels = []struct {
	Channel     domain.Channel
	Name, Class string
}{{domain.SMS, "SMS", "sms"}, {domain.WhatsApp, "WhatsApp", "wa"}, {domain.RCS, "RCS", "rcs"}}

// usageChart is messages per channel per day, stacked, over days days
// from since.
func usageChart(usage []domain.UsageDay, since time.Time, days int) chart {
	series := make([]chartInput, len(chartChannels))
	for ci, ch := range chartChannels {
		series[ci] = chartInput{Name: ch.Name, Class: ch.Class, Values: make([]float64, days)}
	}
	total := 0
	for _, u := range usage {
		i := dayIndex(u.Day, since, days)
		if i < 0 {
			continue
		}
		for ci, ch := range chartChannels {
			if ch.Channel == u.Channel {
				series[ci].Values[i] += float64(u.Messages)
				total += u.Messages
			}
		}
	}
	sum := strconv.Itoa(total) + " messages in the last " + strconv.Itoa(days) + " days"
	c := drawChart(chartSpec{ID: "usage", Title: "Messages per channel per day: " + sum, Slots: chartDays(since, days), Series: series,
		Format: wholeOf, Whole: true, Unit: ""})
	c.Summary = sum
	return c
}

// creditsChart is the credits charged per day (micro-credits summed over
// channels), as bars.
func creditsChart(id string, usage []domain.UsageDay, since time.Time, days int) chart {
	vals := make([]float64, days)
	var total int64
	for _, u := range usage {
		if i := dayIndex(u.Day, since, days); i >= 0 {
			vals[i] += float64(u.Charged)
			total += u.Charged
		}
	}
	sum := creditsOf(float64(total)) + " credits charged in the last " + strconv.Itoa(days) + " days"
	c := drawChart(chartSpec{ID: id, Title: "Credits charged per day: " + sum, Slots: chartDays(since, days),
		Series: []chartInput{{Name: "credits", Class: "credits", Values: vals}}, Format: creditsOf})
	c.Summary = sum
	return c
}
