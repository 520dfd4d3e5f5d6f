package panel

import (
	"strconv"

	"github.com/msgsvc/msgsvc/internal/ledger"
)

// The margins chart: the margin of each day as a bar above (a gain) or
// below (a loss) the zero line, drawn on the server as SVG. The table
// under it has the same figures.

type marginChart struct {
	Width, Height, Zero float64
	Bars                []marginBar
	First, Last         string
	Max, Min            string
}

type marginBar struct {
	X, Y, W, H float64
	Loss       bool
	Title      string
}

func newMarginChart(rows []marginRow) *marginChart {
	if len(rows) == 0 {
		return nil
	}
	const w, h, pad = 720.0, 180.0, 14.0
	var hi, lo int64
	for _, r := range rows {
		m := r.Price - r.Cost
		hi, lo = max(hi, m), min(lo, m)
	}
	span := float64(hi - lo)
	if span == 0 {
		span = 1
	}
	plot := h - 2*pad
	zero := pad + plot*float64(hi)/span
	c := &marginChart{Width: w, Height: h, Zero: zero, First: rows[0].Label, Last: rows[len(rows)-1].Label,
		Max: strconv.FormatFloat(ledger.Credits(hi), 'f', 2, 64), Min: strconv.FormatFloat(ledger.Credits(lo), 'f', 2, 64)}
	step := w / float64(len(rows))
	for i, r := range rows {
		m := r.Price - r.Cost
		if m == 0 {
			continue
		}
		bh := plot * float64(abs64(m)) / span
		y := zero - bh
		if m < 0 {
			y = zero
		}
		c.Bars = append(c.Bars, marginBar{X: float64(i)*step + step*0.15, Y: y, W: step * 0.7, H: max(bh, 0.5), Loss: m < 0,
			Title: r.Label + ": margin " + strconv.FormatFloat(ledger.Credits(m), 'f', -1, 64)})
	}
	return c
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
