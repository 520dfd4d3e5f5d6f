package panel

import (
	"math"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The usage chart: messages per channel per day as stacked bars, drawn on
// the server as SVG (no script, nothing loaded from elsewhere). The same
// figures are in a table beside it for screen readers and for copying.

type chart struct {
	Width, Height float64
	Bars          []chartBar
	Grid          []chartLine
	Labels        []chartLabel
	Legend        []chartSeries
	Days          []chartDay
	Total         int
	Summary       string
}

type chartBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type chartLine struct {
	Y     float64
	Label string
}

type chartLabel struct {
	X    float64
	Text string
}

type chartSeries struct {
	Name  string
	Class string
	Total int
}

type chartDay struct {
	Day      time.Time
	Counts   []int // per channel, in chartChannels order
	Total    int
	Credits  int64
	HasUsage bool
}

// chartChannels are the series, bottom to top; Class picks the colour in
// the style sheet.
var chartChannels = []struct {
	Channel     domain.Channel
	Name, Class string
}{{domain.SMS, "SMS", "sms"}, {domain.WhatsApp, "WhatsApp", "wa"}, {domain.RCS, "RCS", "rcs"}}

const (
	chartW, chartH    = 720.0, 240.0
	padLeft, padRight = 44.0, 8.0
	padTop, padBottom = 12.0, 28.0
	barGap            = 0.25 // share of a slot left empty
	labelEvery        = 5
	chartMinScale     = 4
	plotW             = chartW - padLeft - padRight
	plotH             = chartH - padTop - padBottom
)

// usageChart lays out days days of usage from since (midnight UTC).
func usageChart(usage []domain.UsageDay, since time.Time, days int) chart {
	c := chart{Width: chartW, Height: chartH}
	byDay := make([]chartDay, days)
	for i := range byDay {
		byDay[i] = chartDay{Day: since.AddDate(0, 0, i), Counts: make([]int, len(chartChannels))}
	}
	totals := make([]int, len(chartChannels))
	for _, u := range usage {
		i := int(u.Day.Sub(since) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue
		}
		for ci, ch := range chartChannels {
			if ch.Channel == u.Channel {
				byDay[i].Counts[ci] += u.Messages
				totals[ci] += u.Messages
			}
		}
		byDay[i].Total += u.Messages
		byDay[i].Credits += u.Charged
		byDay[i].HasUsage = true
	}
	peak := 0
	for _, d := range byDay {
		peak = max(peak, d.Total)
		c.Total += d.Total
	}
	scale := niceCeil(max(peak, chartMinScale))
	slot := plotW / float64(days)
	for i, d := range byDay {
		x := padLeft + float64(i)*slot + slot*barGap/2
		y := padTop + plotH
		for ci, n := range d.Counts {
			if n == 0 {
				continue
			}
			h := plotH * float64(n) / float64(scale)
			y -= h
			c.Bars = append(c.Bars, chartBar{X: round1(x), Y: round1(y), W: round1(slot * (1 - barGap)), H: round1(h),
				Class: chartChannels[ci].Class, Title: d.Day.Format("Jan 2") + ": " + strconv.Itoa(n) + " " + chartChannels[ci].Name})
		}
		if i%labelEvery == 0 || i == days-1 {
			c.Labels = append(c.Labels, chartLabel{X: round1(x + slot*(1-barGap)/2), Text: d.Day.Format("Jan 2")})
		}
	}
	for _, f := range []int{0, scale / 2, scale} {
		c.Grid = append(c.Grid, chartLine{Y: round1(padTop + plotH - plotH*float64(f)/float64(scale)), Label: strconv.Itoa(f)})
	}
	for ci, ch := range chartChannels {
		c.Legend = append(c.Legend, chartSeries{Name: ch.Name, Class: ch.Class, Total: totals[ci]})
	}
	for i := len(byDay) - 1; i >= 0; i-- {
		if byDay[i].HasUsage {
			c.Days = append(c.Days, byDay[i])
		}
	}
	c.Summary = strconv.Itoa(c.Total) + " messages in the last " + strconv.Itoa(days) + " days"
	return c
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
