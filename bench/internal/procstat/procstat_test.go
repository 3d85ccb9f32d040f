package procstat

import (
	"os"
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

func TestHostFacts(t *testing.T) {
	if LoadAvg() == "?" || MemTotal() == "?" {
		t.Errorf("LoadAvg %q, MemTotal %q", LoadAvg(), MemTotal())
	}
}
