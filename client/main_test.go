package client_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// The runnable examples talk to a msgsvc node named by MSGSVC_URL,
// MSGSVC_API_KEY and MSGSVC_WEBHOOK_SECRET. The server's tree runs them
// against a node of its own (internal/clienttest); run alone without a
// node, this module runs its unit tests only and says so.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("MSGSVC_URL") == "" && flag.Lookup("test.run").Value.String() == "" {
		fmt.Println("client: MSGSVC_URL is not set, so the examples (which need a node) are not run; the server tree's internal/clienttest runs them")
		if err := flag.Set("test.run", "^Test"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
