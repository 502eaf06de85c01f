// Command pause does what the Kubernetes pause container does: it waits for SIGTERM or SIGINT and exits.
// tests/cluster/runtime puts it into the local pause image, so sandboxes and containers really run.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
