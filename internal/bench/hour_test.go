package bench

import (
	"os"
	"testing"
)

// hourEnv gates the tests that draw and replay the fraud bench's whole
// hour of traffic (its day of history included). Under -race each takes
// minutes on a small machine, more than the rest of the README's test
// command put together, so that command skips them; .ci/run sets it and
// fails if they skip.
const hourEnv = "MSGSVC_TEST_GUARD_HOUR"

func needHour(t *testing.T) {
	t.Helper()
	if os.Getenv(hourEnv) == "" {
		t.Skipf("draws the fraud bench's whole hour of traffic (minutes under -race): set %s=1 to run it (CI does)", hourEnv)
	}
}
