package bench

import (
	"fmt"
	"io"
	"sort"
)

// Print writes a run's result as msgsvc bench shows it.
func Print(w io.Writer, r Result) {
	fmt.Fprintf(w, "front %s\n", r.Front)
	fmt.Fprintf(w, "messages %d (%d requests, %d connections), accepted %d, refused %d\n", r.Messages, r.Requests, r.Concurrency, r.Accepted, r.Refused)
	fmt.Fprintf(w, "accepted sends/s      %.0f   (send phase %.2fs)\n", r.AcceptedPerSec, r.SendSeconds)
	fmt.Fprintf(w, "accept latency        p50 %.2f ms  p90 %.2f ms  p99 %.2f ms\n", r.AcceptP50ms, r.AcceptP90ms, r.AcceptP99ms)
	fmt.Fprintf(w, "end-to-end msgs/s     %.0f   (first send to last final webhook %.2fs)\n", r.EndToEndPerSec, r.EndToEndSeconds)
	fmt.Fprintf(w, "status latency        p50 %.1f ms  p99 %.1f ms\n", r.StatusP50ms, r.StatusP99ms)
	if r.ServiceCPUSecs > 0 {
		fmt.Fprintf(w, "service CPU           %.0f µs/message (%.2fs)\n", r.CPUMicrosPerMsg, r.ServiceCPUSecs)
		if r.DBCPUSecs > 0 {
			fmt.Fprintf(w, "database CPU          %.0f µs/message (%.2fs); service + database %.0f µs/message\n",
				r.DBCPUMicrosPerMsg, r.DBCPUSecs, r.TotalCPUMicrosPerMsg)
		}
		if r.PeerCPUMicrosPerMsg > 0 {
			fmt.Fprintf(w, "peer CPU              %.0f µs/message (not included above)\n", r.PeerCPUMicrosPerMsg)
		}
		if r.PeakRSSMiB > 0 {
			fmt.Fprintf(w, "service memory        peak %.0f MiB, now %.0f MiB\n", r.PeakRSSMiB, r.FinalRSSMiB)
		} else {
			fmt.Fprintf(w, "service memory        now %.0f MiB (from the nodes' metrics)\n", r.FinalRSSMiB)
		}
	}
	for _, m := range r.Memory {
		fmt.Fprintf(w, "memory at %-9d    peak %.0f MiB, now %.0f MiB\n", m.Messages, m.PeakRSSMiB, m.RSSMiB)
	}
	if l := r.Locks; l != nil {
		fmt.Fprintf(w, "database lock waits   %d of %d samples, at most %d sessions waiting\n", l.WithWaiters, l.Samples, l.MaxWaiters)
	}
	printWrites(w, r)
	printCycle(w, r.Cycle)
	fmt.Fprintf(w, "bench CPU             %.2fs\n", r.BenchCPUSecs)
	fmt.Fprintf(w, "webhooks %d, missing final events %d, duplicate events %d\n", r.Webhooks, r.Missing, r.Duplicates)
	if r.FirstErrorSample != "" {
		fmt.Fprintf(w, "first error: %s\n", r.FirstErrorSample)
	}
}

// printWrites prints what the run wrote per message, the largest tables first.
func printWrites(w io.Writer, r Result) {
	if r.DiskBytesPerMsg > 0 {
		fmt.Fprintf(w, "service disk writes   %.0f bytes/message\n", r.DiskBytesPerMsg)
	}
	if r.RowWritesPerMsg == 0 {
		return
	}
	fmt.Fprintf(w, "database writes       %.2f rows/message, WAL %.0f bytes/message\n", r.RowWritesPerMsg, r.WALBytesPerMsg)
	tables := make([]string, 0, len(r.RowWritesByTable))
	for t := range r.RowWritesByTable {
		tables = append(tables, t)
	}
	sort.Slice(tables, func(i, j int) bool {
		a, b := r.RowWritesByTable[tables[i]], r.RowWritesByTable[tables[j]]
		return a > b || a == b && tables[i] < tables[j]
	})
	for _, t := range tables {
		fmt.Fprintf(w, "  %-19s %.2f rows/message\n", t, r.RowWritesByTable[t])
	}
}
