package worker

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestQueueTimeoutExcludesBundleLoad: the first render of a bundle whose
// load takes longer than the queue timeout is served, not refused as
// ErrQueueTimeout: the queue timeout bounds the wait for a free runtime.
func TestQueueTimeoutExcludesBundleLoad(t *testing.T) {
	const slowLoad = "load 300ms"
	src := map[string]string{}
	for i := range 4 {
		src[fmt.Sprintf("slow%d", i)] = slowLoad
	}
	p, _ := newPools(t, src, func(c *Config) { c.QueueTimeout = 50 * time.Millisecond })
	for id := range src {
		res, err := p.Render(context.Background(), id, nil, "echo loaded", nil)
		if err != nil || res.Body != "loaded" {
			t.Fatalf("first render of %s (300 ms load, 50 ms queue timeout): %q, %v", id, res.Body, err)
		}
	}
}
