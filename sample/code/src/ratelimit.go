package ratelimit

import "time"

// TokenBucket allows bursts up to Capacity and refills at Rate tokens per second.
type TokenBucket struct {
	Capacity float64
	Rate     float64
	tokens   float64
	last     time.Time
}

// Allow reports whether one request may proceed now, consuming a token if so.
func (b *TokenBucket) Allow(now time.Time) bool {
	elapsed := now.Sub(b.last).Seconds()
	b.last = now
	b.tokens = min(b.Capacity, b.tokens+elapsed*b.Rate)
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}
