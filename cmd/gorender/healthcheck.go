package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// healthcheck GETs /health of a gorender (for Docker's HEALTHCHECK in an
// image without curl) and fails unless it answers 200 in time. The target
// is --url, else --host and -p, else RENDERER_HOST and RENDERER_PORT; it
// starts nothing and applies no password policy.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	port := portFlag(fs, "port to check (default RENDERER_PORT, else 3800)")
	host := fs.String("host", "", "host to check (default RENDERER_HOST)")
	target := fs.String("url", "", "URL to check instead of host and port")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkPort("healthcheck", *port); err != nil {
		return err
	}
	if *timeout <= 0 {
		return usagef("healthcheck: --timeout %s is not a positive duration", *timeout)
	}
	var u string
	if *target != "" {
		if *host != "" || *port != 0 {
			return usagef("healthcheck: --url names the host and port; leave out --host and -p")
		}
		parsed, err := url.Parse(*target)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return usagef("healthcheck: --url %q is not an http:// or https:// URL", *target)
		}
		if parsed.Path == "" || parsed.Path == "/" {
			parsed.Path = "/health"
		}
		u = parsed.String()
	} else {
		h := cmp.Or(*host, getenv("RENDERER_HOST"))
		switch h {
		case "", "0.0.0.0", "::", "[::]":
			h = "127.0.0.1" // a bind address for every interface, the loopback among them
		}
		p := strconv.Itoa(*port)
		if *port == 0 {
			p = cmp.Or(getenv("RENDERER_PORT"), "3800")
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("healthcheck: RENDERER_PORT=%q is not a port; set it or pass -p", p)
			}
		}
		u = "http://" + net.JoinHostPort(h, p) + "/health"
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err // without the URL repeated
		}
		return fmt.Errorf("healthcheck: %s did not answer: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", u, resp.Status)
	}
	_, err = fmt.Fprintf(stdout, "%s answered %s\n", u, resp.Status)
	return err
}
