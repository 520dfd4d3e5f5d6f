package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/msgsvc/msgsvc/client"
)

// runUsage is `msgsvc usage`: the key's usage report through the public
// API, as a table or as the API's JSON.
func runUsage(ctx context.Context, node Node, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("msgsvc usage", stdout, stderr, "msgsvc usage — what the key's environment sent and was charged, per day or month, channel and country",
		"msgsvc usage --from 2026-11-01 --group-by month")
	api := addAPIFlags(fs, node)
	var q client.UsageQuery
	fs.StringVar(&q.From, "from", "", "first UTC day, YYYY-MM-DD (default: 29 days before --to)")
	fs.StringVar(&q.To, "to", "", "last UTC day, YYYY-MM-DD (default: today)")
	fs.StringVar(&q.GroupBy, "group-by", "day", "day or month")
	fs.StringVar(&q.Channel, "channel", "", "only SMS, WHATSAPP or RCS")
	asJSON := fs.Bool("json", false, "print the API's answer as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c, err := api.client()
	if err != nil {
		return err
	}
	u, err := c.Usage(ctx, q)
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == client.CodeValidation && len(apiErr.Fields) > 0 {
		var b strings.Builder
		b.WriteString("the node refused the report's parameters:")
		for _, f := range apiErr.Fields {
			fmt.Fprintf(&b, "\n  --%s: %s", strings.ReplaceAll(f.Field, "groupBy", "group-by"), f.Message)
		}
		return errors.New(b.String())
	}
	if err != nil {
		return explain(*api.url, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(u)
	}
	return printUsage(stdout, u)
}

func printUsage(w io.Writer, u *client.Usage) error {
	if len(u.Usage) == 0 {
		_, err := fmt.Fprintln(w, "no messages in this period")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "period\tchannel\tcountry\tmessages\tsegments\tcredits (%s)\t\n", u.Currency)
	var msgs, segs, micro int64
	for _, r := range u.Usage {
		fmt.Fprintf(tw, "%s\t%s\t+%s\t%d\t%d\t%s\t\n", r.Period, r.Channel, r.Country, r.Messages, r.Segments, credits(r.Credits))
		msgs, segs, micro = msgs+r.Messages, segs+r.Segments, micro+client.MicroCredits(r.Credits)
	}
	fmt.Fprintf(tw, "total\t\t\t%d\t%d\t%s\t\n", msgs, segs, credits(float64(micro)/1e6))
	return tw.Flush()
}

// credits prints an amount with as many decimals as it has (at most 6).
func credits(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
