package config

import "syscall"

// Connection cap defaults: a quarter of the descriptors (at least
// connReserveMin) stay for everything else (bundle and cache files,
// staging, logs), and the cap is at most maxConnectionsCeiling whatever
// the descriptor limit, so that what connections can cost stays bounded
// (docs/limits.md "What a client without the password can cost").
const (
	connReserveMin        = 64
	maxConnectionsCeiling = 4096
	minConnections        = 16
)

// defaultMaxConnections is the connection cap derived from the process's
// descriptor limit (RLIMIT_NOFILE, which Go raises to its hard limit at
// start): three quarters of it, keeping at least 64 descriptors, between
// 16 and 4096.
func defaultMaxConnections() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == 0 {
		return maxConnectionsCeiling
	}
	return connectionsFor(lim.Cur)
}

// connectionsFor is the cap for a descriptor limit of nofile.
func connectionsFor(nofile uint64) int {
	reserve := max(uint64(connReserveMin), nofile/4)
	if nofile <= reserve+minConnections {
		return minConnections
	}
	return int(min(nofile-reserve, maxConnectionsCeiling))
}

// DefaultMaxUnauthenticatedConnections is the default of
// RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS: what connections of clients
// without the password may buffer is bounded by their number
// (docs/limits.md "What a client without the password can cost": 512 h2c connections with full flow-control windows are about
// 0.55 GiB), and a Rails connection authenticates on its first request.
const DefaultMaxUnauthenticatedConnections = 512
