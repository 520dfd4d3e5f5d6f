// Command msgsvc is the messaging gateway: server, dev installation and
// operator tools in one binary. The command line lives in internal/cli,
// the node it runs in internal/app.
package main

import (
	"os"

	"github.com/msgsvc/msgsvc/internal/app"
	"github.com/msgsvc/msgsvc/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, app.Node{}))
}
