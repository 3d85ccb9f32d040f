package procstat

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestCPUReadsThisProcess(t *testing.T) {
	name, sec, err := CPU(os.Getpid())
	if err != nil || name == "" || sec < 0 {
		t.Fatalf("CPU(self) = %q, %v, %v", name, sec, err)
	}
}

func TestMetricSum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP q depth\nq{name=\"a\"} 2\nq{name=\"b\"} 3\nqq 7\nplain 1.5\n")
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"q": 5, `q{name="b"`: 3, "plain": 1.5} {
		got, err := MetricSum(context.Background(), addr, name)
		if err != nil || got != want {
			t.Errorf("MetricSum(%s) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := MetricSum(context.Background(), addr, "missing"); err == nil {
		t.Error("a missing metric is an error")
	}
}

func TestMetricByLabel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE r counter\n"+
			"r{code=\"200\",host=\"a b\",method=\"GET\"} 2\n"+
			"r{code=\"404\",host=\"a\",method=\"GET\"} 1\n"+
			"r{code=\"201\",method=\"POST\"} 4\n"+
			"r{code=\"200\",xmethod=\"PUT\"} 8\n"+
			"rr{method=\"GET\"} 16\n")
	}))
	defer srv.Close()
	got, err := MetricByLabel(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "r", "method")
	if err != nil || len(got) != 2 || got["GET"] != 3 || got["POST"] != 4 {
		t.Fatalf("MetricByLabel = %v, %v; want GET 3, POST 4 (not xmethod, not rr)", got, err)
	}
}

func TestCPUByNameSumsByCommand(t *testing.T) {
	t1 := CPUByName([]int{os.Getpid(), os.Getpid(), -1})
	if len(t1) != 1 {
		t.Fatalf("%v: want one command (this process, twice; the missing pid left out)", t1)
	}
	_, once, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for name, sec := range t1 {
		// Both samples came before once's, by less than a few ticks.
		if sec > 2*once || sec < 2*once-0.5 {
			t.Fatalf("%s: %.2f s for two earlier samples of a process at %.2f s", name, sec, once)
		}
	}
}
