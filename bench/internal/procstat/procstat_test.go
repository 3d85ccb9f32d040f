package procstat

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestRSSSamplerOwnProcess(t *testing.T) {
	from := time.Now()
	s := StartRSSSampler(os.Getpid(), 10*time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	s.Stop()
	med, peak, n := s.Window(from, time.Now())
	if n == 0 || med <= 0 || peak < med {
		t.Fatalf("Window = %d, %d, %d; want samples with 0 < median <= peak", med, peak, n)
	}
	if _, _, n := s.Window(time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)); n != 0 {
		t.Errorf("a window without samples counted %d", n)
	}
}

func TestFreeAddrAndHTTPOK(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreeAddr = %q, %v", addr, err)
	}
	if HTTPOK(context.Background(), "http://"+addr+"/") {
		t.Error("HTTPOK on a closed port")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	if !HTTPOK(context.Background(), "http://"+addr+"/") {
		t.Error("HTTPOK false on a server answering 200")
	}
	if LoadAvg() == "?" || MemTotal() == "?" {
		t.Errorf("LoadAvg %q, MemTotal %q", LoadAvg(), MemTotal())
	}
}
