package app

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/otelop/otelop/internal/serviceprovider/simprovider"
)

var world *simprovider.World

// TestMain starts the four API servers and the simulated cluster provider once for the package.
func TestMain(m *testing.M) {
	w, err := simprovider.Start(Scheme())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	world = w
	ctx, cancel := context.WithCancel(context.Background())
	p := &simprovider.Provider{World: w, TokenTTL: time.Hour, Errors: func(err error) { fmt.Fprintln(os.Stderr, "simprovider:", err) }}
	go p.Run(ctx)
	code := m.Run()
	cancel()
	if err := w.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping:", err)
	}
	os.Exit(code)
}
