package bench

import (
	"os"
	"syscall"
	"testing"
)

func TestWriteCost(t *testing.T) {
	res := Result{Accepted: 4}
	before := Writes{Rows: map[string]int64{"messages": 10, "ledger": 3}, WALBytes: 1000}
	after := Writes{Rows: map[string]int64{"messages": 22, "ledger": 7, "campaigns": 4}, WALBytes: 9000}
	res.writeCost(after, before)
	if res.RowWritesPerMsg != 5 { // (12 + 4 + 4) / 4
		t.Fatalf("rows per message %v, want 5", res.RowWritesPerMsg)
	}
	want := map[string]float64{"messages": 3, "ledger": 1, "campaigns": 1}
	for table, v := range want {
		if res.RowWritesByTable[table] != v {
			t.Errorf("%s: %v rows per message, want %v", table, res.RowWritesByTable[table], v)
		}
	}
	if res.WALBytesPerMsg != 2000 {
		t.Fatalf("WAL bytes per message %v, want 2000", res.WALBytesPerMsg)
	}
}

func TestDiskWritesCountsAFileWrite(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skip("no /proc/PID/io on this system")
	}
	dir := t.TempDir()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err == nil && fs.Type == 0x01021994 {
		t.Skip("the temporary directory is on tmpfs, whose writes never reach storage")
	}
	pids := []int{os.Getpid()}
	before := diskWrites(pids)
	f, err := os.CreateTemp(dir, "w")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := diskWrites(pids) - before; got < 1<<20 {
		t.Fatalf("write_bytes grew by %d after a synced 1 MiB write", got)
	}
}
