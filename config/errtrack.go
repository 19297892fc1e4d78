// The SENTRY_* and HONEYBADGER_* rows: error tracking (package errtrack).

package config

import (
	"errors"
	"net/url"

	"github.com/gorender/gorender/errtrack"
)

// parseSentryDSN reads SENTRY_DSN as the SDK does: a bad one stops the
// start here, named, rather than silently sending nothing.
func parseSentryDSN(l *loader, v string) error {
	if v == "" {
		return nil
	}
	if err := errtrack.CheckDSN(v); err != nil {
		return err
	}
	l.c.ErrorTracking.SentryDSN = v
	return nil
}

func parseHoneybadgerEndpoint(l *loader, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http:// or https:// URL, such as https://api.honeybadger.io")
	}
	l.c.ErrorTracking.HoneybadgerEndpoint = v
	return nil
}

// showURL is a URL without its user information (a DSN's key).
func showURL(v string) string {
	u, err := url.Parse(v)
	if v == "" || err != nil {
		return ""
	}
	u.User = nil
	return u.String()
}

// sentryOnly, honeybadgerOnly and errorTrackingOnly are values the
// start-up log shows only while their tracker is on.
func sentryOnly(v value) value {
	return shownAs(v, func(c *Config) string {
		if c.ErrorTracking.SentryDSN == "" {
			return ""
		}
		return v.show(c)
	})
}

func honeybadgerOnly(v value) value {
	return shownAs(v, func(c *Config) string {
		if c.ErrorTracking.HoneybadgerAPIKey == "" {
			return ""
		}
		return v.show(c)
	})
}

func errorTrackingOnly(v value) value {
	return shownAs(v, func(c *Config) string {
		if !c.ErrorTracking.On() {
			return ""
		}
		return v.show(c)
	})
}
