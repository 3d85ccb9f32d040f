// Command pause is the sandbox ("pause") image of the real-node tests: it sleeps until SIGTERM or
// SIGINT and exits 0. It is a few lines of Go so that the image is built from source, not pulled.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
