package config

import "testing"

func TestConnectionsFor(t *testing.T) {
	for _, tc := range []struct {
		nofile uint64
		want   int
	}{
		{64, minConnections}, {80, minConnections}, {100, 36}, {256, 192}, {1024, 768}, {20000, maxConnectionsCeiling}, {1 << 20, maxConnectionsCeiling},
	} {
		if got := connectionsFor(tc.nofile); got != tc.want {
			t.Errorf("connectionsFor(%d) = %d, want %d", tc.nofile, got, tc.want)
		}
	}
}
