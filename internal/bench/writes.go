package bench

import (
	"context"
	"os"
	"strconv"
	"strings"
)

// Writes is what a database had written when it was read: rows inserted,
// updated and deleted by table, and the bytes of its write-ahead log.
type Writes struct {
	Rows     map[string]int64
	WALBytes int64
}

// WriteCounter is a DBProbe that can also count a run's writes. Counting
// them, not timing them, is what tells whether a change of design wrote
// less: the figures do not move with the machine's load.
type WriteCounter interface {
	Writes(ctx context.Context) (Writes, error)
}

// writeCost fills in the rows and WAL bytes per message since before.
func (res *Result) writeCost(after, before Writes) {
	if res.Accepted == 0 {
		return
	}
	n := float64(res.Accepted)
	res.RowWritesByTable = map[string]float64{}
	var total int64
	for table, rows := range after.Rows {
		d := rows - before.Rows[table]
		if d == 0 {
			continue
		}
		total += d
		res.RowWritesByTable[table] = float64(d) / n
	}
	res.RowWritesPerMsg = float64(total) / n
	res.WALBytesPerMsg = float64(after.WALBytes-before.WALBytes) / n
}

// diskWrites sums what the processes caused to be written to storage
// (write_bytes of /proc/PID/io): for a node on SQLite, its WAL and the
// checkpoints into the database file; network writes are not counted.
func diskWrites(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				total += n
			}
		}
	}
	return total
}
