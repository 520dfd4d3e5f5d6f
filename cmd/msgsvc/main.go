// Command msgsvc is the messaging gateway: server, dev installation and
// operator tools in one binary. All of it lives in internal/app.
package main

import (
	"os"

	"github.com/msgsvc/msgsvc/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
