// Command authtarget is the scrape target of the real-node authenticated-scrape test: it serves
// /metrics in the Prometheus text format only to requests with the basic-auth credentials in
// $TARGET_USERNAME and $TARGET_PASSWORD (401 otherwise), and counts both kinds of request. /counts
// (no credentials needed) returns the counts as JSON, so that the test sees whether a scraper
// came with the right credentials.
package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Counts are what /counts returns.
type Counts struct {
	// Authorized counts /metrics requests with the right credentials, Unauthorized the others.
	Authorized   int64 `json:"authorized"`
	Unauthorized int64 `json:"unauthorized"`
}

// MetricName is the counter /metrics serves: the authorized scrapes so far, this one included.
const MetricName = "authtarget_authorized_scrapes_total"

type target struct {
	user, password string
	authorized     atomic.Int64
	unauthorized   atomic.Int64
}

func (t *target) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		if !ok || !equal(user, t.user) || !equal(password, t.password) {
			t.unauthorized.Add(1)
			log.Printf("unauthorized scrape from %s (credentials sent: %t)", r.RemoteAddr, ok)
			w.Header().Set("WWW-Authenticate", `Basic realm="metrics"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		n := t.authorized.Add(1)
		log.Printf("authorized scrape %d from %s", n, r.RemoteAddr)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = fmt.Fprintf(w, "# HELP %s Scrapes with the right credentials.\n# TYPE %s counter\n%s %d\n",
			MetricName, MetricName, MetricName, n)
	})
	mux.HandleFunc("/counts", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Counts{Authorized: t.authorized.Load(), Unauthorized: t.unauthorized.Load()})
	})
	return mux
}

// equal compares in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func main() {
	t := &target{user: os.Getenv("TARGET_USERNAME"), password: os.Getenv("TARGET_PASSWORD")}
	if t.user == "" || t.password == "" {
		log.Fatal("TARGET_USERNAME and TARGET_PASSWORD must be set")
	}
	addr := os.Getenv("LISTEN_ADDR")
	if addr == "" {
		addr = ":9100"
	}
	srv := &http.Server{Addr: addr, Handler: t.handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("serving /metrics with basic auth on %s", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
