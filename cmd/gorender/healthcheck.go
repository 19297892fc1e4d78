package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// healthcheck GETs /health of the configured host and port. It reads only
// RENDERER_HOST and RENDERER_PORT and starts nothing.
func healthcheck(ctx context.Context, getenv func(string) string) error {
	host := getenv("RENDERER_HOST")
	switch host {
	case "", "0.0.0.0", "::", "[::]":
		host = "127.0.0.1"
	}
	port := getenv("RENDERER_PORT")
	if port == "" {
		port = "3800"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + "/health"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}
