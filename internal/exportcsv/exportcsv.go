// Package exportcsv writes the operator's console's documents as CSV: a
// statement, and the rows of the message, ledger, usage and margins
// exports. The management API, the panel and the command line write the
// same columns through it. Amounts are credits with at most 6 decimals;
// times are RFC 3339 in UTC.
package exportcsv

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Writer is a CSV writer whose text cells cannot be read as formulas by a
// spreadsheet (a reference or note beginning with =, +, - or @ gets a
// leading apostrophe); numbers are written as they are.
type Writer struct{ w *csv.Writer }

// New writes CSV to w.
func New(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Row writes one record.
func (w *Writer) Row(cells ...string) error { return w.w.Write(cells) }

// Flush writes what is buffered and reports the first error of any write.
func (w *Writer) Flush() error {
	w.w.Flush()
	return w.w.Error()
}

// Text is a cell of text someone typed, made safe to open in a
// spreadsheet.
func Text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Credits is an amount of micro-credits as credits.
func Credits(micro int64) string { return strconv.FormatFloat(ledger.Credits(micro), 'f', -1, 64) }

// Time is a time in RFC 3339 (UTC), empty when zero.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// StatementHeader names the statement's columns: one row per line of the
// statement (opening, topUps, transfers, one charge row per channel and
// country, refunds, closing).
var StatementHeader = []string{"accountId", "month", "currency", "line", "channel", "country", "messages", "segments", "credits"}

// Statement writes a statement with its header.
func Statement(w *Writer, accountID, month, currency string, st ledger.Statement) error {
	if err := w.Row(StatementHeader...); err != nil {
		return err
	}
	line := func(name string, amount int64) error {
		return w.Row(accountID, month, currency, name, "", "", "", "", Credits(amount))
	}
	for _, l := range []struct {
		name   string
		amount int64
	}{{"opening", st.Opening}, {"topUps", st.TopUps}, {"transfers", st.Transfers}} {
		if err := line(l.name, l.amount); err != nil {
			return err
		}
	}
	for _, c := range st.Charges {
		if err := w.Row(accountID, month, currency, "charges", c.Channel, c.Country, itoa(c.Messages), itoa(c.Segments),
			Credits(c.Amount)); err != nil {
			return err
		}
	}
	if err := line("refunds", st.Refunds); err != nil {
		return err
	}
	if err := line("closing", st.Closing); err != nil {
		return err
	}
	return w.Flush()
}

// MessageHeader names the message export's columns.
var MessageHeader = []string{"id", "accountId", "createdAt", "to", "from", "channel", "type", "status", "segments", "credits",
	"errorCode", "environment", "campaignId", "reference"}

// Message writes one message (never its text).
func Message(w *Writer, m domain.Message) error {
	return w.Row(m.ID, m.AccountID, Time(m.CreatedAt), m.To, Text(m.From), string(m.Channel), string(m.Type), string(m.Status),
		strconv.Itoa(m.Segments), Credits(m.Billed()), m.ErrorCode, string(m.Env), m.CampaignID, Text(m.Reference))
}

// LedgerHeader names the ledger export's columns.
var LedgerHeader = []string{"id", "createdAt", "kind", "amount", "balanceAfter", "messageId", "campaignId", "counterparty", "note"}

// Ledger writes one ledger line.
func Ledger(w *Writer, e ledger.Entry) error {
	return w.Row(e.ID, Time(e.CreatedAt), string(e.Kind), Credits(e.Amount), Credits(e.BalanceAfter), e.MessageID, e.CampaignID,
		e.Counterparty, Text(e.Note))
}

// UsageHeader names the usage export's columns.
var UsageHeader = []string{"day", "environment", "channel", "country", "messages", "segments", "credits", "delivered", "failed"}

// Usage writes one day's counts of a channel to a calling code.
func Usage(w *Writer, u domain.UsageDelta) error {
	return w.Row(domain.DayTime(u.Day).Format(time.DateOnly), string(u.Env), string(u.Channel), u.Country, itoa(u.Messages),
		itoa(u.Segments), Credits(u.Credits), itoa(u.Statuses[2]), itoa(u.Statuses[4]))
}

// MarginHeader names the margins export's columns.
var MarginHeader = []string{"key", "messages", "segments", "price", "cost", "margin", "marginPercent", "deliveredRatio"}

// Margin writes one row of the margins report.
func Margin(w *Writer, m domain.MarginRow) error {
	pct, ratio := "", ""
	if m.Price != 0 {
		pct = strconv.FormatFloat(float64(m.Price-m.Cost)*100/float64(m.Price), 'f', 2, 64)
	}
	if m.Final > 0 {
		ratio = strconv.FormatFloat(float64(m.Delivered)/float64(m.Final), 'f', 4, 64)
	}
	return w.Row(Text(m.Key), itoa(m.Messages), itoa(m.Segments),
		Credits(m.Price), Credits(m.Cost), Credits(m.Price-m.Cost), pct, ratio)
}
