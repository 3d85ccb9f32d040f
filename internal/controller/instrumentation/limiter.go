package instrumentation

import (
	"sync"
	"time"
)

// Limiter is a token bucket: at most PerMinute restarts in any minute, a burst of PerMinute
// included. The zero value and a non-positive PerMinute allow nothing.
type Limiter struct {
	mu        sync.Mutex
	perMinute int
	tokens    float64
	last      time.Time
}

// NewLimiter returns a full bucket of perMinute tokens.
func NewLimiter(perMinute int) *Limiter {
	return &Limiter{perMinute: perMinute, tokens: float64(max(perMinute, 0))}
}

func (l *Limiter) refill(now time.Time) {
	if l.perMinute <= 0 {
		return
	}
	if !l.last.IsZero() && now.After(l.last) {
		l.tokens += now.Sub(l.last).Minutes() * float64(l.perMinute)
		l.tokens = min(l.tokens, float64(l.perMinute))
	}
	if l.last.IsZero() || now.After(l.last) {
		l.last = now
	}
}

// Allow takes a token at now and reports whether there was one.
func (l *Limiter) Allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refill(now)
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// Wait returns how long after now a token is available (0 when one is; a minute when the
// limiter allows nothing).
func (l *Limiter) Wait(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perMinute <= 0 {
		return time.Minute
	}
	l.refill(now)
	if l.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - l.tokens) / float64(l.perMinute) * float64(time.Minute))
}
