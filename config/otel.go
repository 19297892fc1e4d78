// OpenTelemetry: the readers of the OTEL_* rows.

package config

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorender/gorender/tracing"
)

// otlpProtocols are the OTLP transports of OTEL_EXPORTER_OTLP_PROTOCOL.
var otlpProtocols = []string{tracing.ProtocolHTTPProtobuf, tracing.ProtocolHTTPJSON, tracing.ProtocolGRPC}

// tracingOnly is a value the start-up log shows only while traces are on.
func tracingOnly(v value) value {
	return shownAs(v, func(c *Config) string {
		if !c.Tracing.On() {
			return ""
		}
		return v.show(c)
	})
}

// otlpEndpoint reads a collector URL. It is shown without its user
// information, which may hold a credential.
func otlpEndpoint(get func(*Config) *string) value {
	return custom{
		read: func(l *loader, v string) error {
			if v == "" {
				return nil
			}
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errors.New("want an http:// or https:// URL, such as http://otel-collector:4318")
			}
			*get(l.c) = v
			return nil
		},
		format: func(c *Config) string {
			u, err := url.Parse(*get(c))
			if !c.Tracing.On() || *get(c) == "" || err != nil {
				return ""
			}
			u.User = nil
			return u.String()
		},
	}
}

func parseTracesExporter(l *loader, v string) error {
	switch v {
	case "":
		l.c.Tracing.Exporter = tracing.ExporterNone
		if l.c.Tracing.Endpoint != "" || l.c.Tracing.TracesEndpoint != "" {
			l.c.Tracing.Exporter = tracing.ExporterOTLP
		}
	case tracing.ExporterOTLP, tracing.ExporterNone:
		l.c.Tracing.Exporter = v
	default:
		return errors.New("want otlp or none: gorender exports traces over OTLP only")
	}
	return nil
}

// parseSDKDisabled reads OTEL_SDK_DISABLED as the specification does: only
// true, in any letter case, disables.
func parseSDKDisabled(l *loader, v string) error {
	switch strings.ToLower(v) {
	case "true":
		l.c.Tracing.Exporter = tracing.ExporterNone
	case "false":
	default:
		l.warn("OTEL_SDK_DISABLED=%q is taken as false: only true disables OpenTelemetry", v)
	}
	return nil
}

// parseServiceName reads OTEL_SERVICE_NAME, else the service.name of
// OTEL_RESOURCE_ATTRIBUTES (which the exporter's resource reads too),
// else gorender.
func parseServiceName(l *loader, v string) error {
	if v == "" {
		v = "gorender"
		for _, kv := range strings.Split(l.getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
			if key, value, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(key) == "service.name" {
				if name, err := url.PathUnescape(strings.TrimSpace(value)); err == nil && name != "" {
					v = name
				}
			}
		}
	}
	l.c.Tracing.ServiceName = v
	return nil
}

// ratio reads a number from 0 to 1.
func ratio(get func(*Config) *float64) value {
	return field[float64]{get: get,
		read: func(v string) (float64, error) {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return 0, errors.New("want a number from 0 to 1")
			}
			return f, nil
		},
		format: func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) },
	}
}
