// The kinds of values a row reads (a number, a duration, a size, a switch, a
// choice...), and the readers and formats they share.

package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// field is a value stored in one Config field of type T.
type field[T any] struct {
	get    func(*Config) *T
	read   func(string) (T, error)
	format func(T) string
}

func (f field[T]) parse(l *loader, v string) error {
	x, err := f.read(v)
	if err != nil {
		return err
	}
	*f.get(l.c) = x
	return nil
}

func (f field[T]) show(c *Config) string { return f.format(*f.get(c)) }

// custom is a value read and shown by its own functions.
type custom struct {
	read   func(l *loader, v string) error
	format func(c *Config) string
}

func (c custom) parse(l *loader, v string) error { return c.read(l, v) }
func (c custom) show(cfg *Config) string         { return c.format(cfg) }

// computed is a value whose default ("" read) is computed by def.
type computed struct {
	value
	def func(l *loader)
}

func (c computed) parse(l *loader, v string) error {
	if v == "" {
		c.def(l)
		return nil
	}
	return c.value.parse(l, v)
}

func orComputed(v value, def func(l *loader)) value { return computed{v, def} }

// shown is a value shown its own way.
type shown struct {
	value
	format func(c *Config) string
}

func (s shown) show(c *Config) string { return s.format(c) }

func shownAs(v value, format func(c *Config) string) value { return shown{v, format} }

func text(get func(*Config) *string) value {
	return field[string]{get: get,
		read:   func(v string) (string, error) { return v, nil },
		format: func(v string) string { return cmp.Or(v, "unset") },
	}
}

func number(get func(*Config) *int, lo, hi int) value {
	return field[int]{get: get,
		read: func(v string) (int, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return 0, fmt.Errorf("want a whole number %d-%d", lo, hi)
			}
			return n, nil
		},
		format: strconv.Itoa,
	}
}

// positive and orZero are the least a duration may be.
const (
	positive = time.Duration(1)
	orZero   = time.Duration(0)
)

// duration reads Go duration syntax or a bare number of units.
func duration(get func(*Config) *time.Duration, unit time.Duration, least time.Duration) value {
	unitName := map[time.Duration]string{time.Second: "seconds", time.Minute: "minutes"}[unit]
	want := "want a positive duration such as 500ms, 2s, 1m, or a number of " + unitName
	if least == orZero {
		want = "want a duration such as 500ms, 2s, 1m, or a number of " + unitName + " (0: never)"
	}
	return field[time.Duration]{get: get,
		read: func(v string) (time.Duration, error) {
			d, err := parseDuration(v, unit)
			if err != nil || d < least {
				return 0, errors.New(want)
			}
			return d, nil
		},
		format: func(d time.Duration) string {
			if d == 0 {
				return "off"
			}
			return FormatDuration(d)
		},
	}
}

// size reads a number of bytes, with or without a unit.
func size(get func(*Config) *uint64) value {
	return field[uint64]{get: get,
		read: func(v string) (uint64, error) {
			n, err := parseBytes(v)
			if err != nil {
				return 0, errors.New("want a size such as 512MiB or 2GiB, or 0 for off")
			}
			return n, nil
		},
		format: func(n uint64) string {
			if n == 0 {
				return "off"
			}
			return FormatBytes(n)
		},
	}
}

// bytesAtLeast reads a size of at least least bytes (and at most 1 TiB).
func bytesAtLeast(get func(*Config) *int64, least int64) value {
	return field[int64]{get: get,
		read: func(v string) (int64, error) {
			n, err := parseBytes(v)
			if err != nil || n < uint64(least) || n > 1<<40 {
				return 0, fmt.Errorf("want a size of at least %s, such as 64MiB or 1GiB", FormatBytes(uint64(least)))
			}
			return int64(n), nil
		},
		format: func(n int64) string { return FormatBytes(uint64(n)) },
	}
}

// sizeOrOff is a size of at most 1 TiB where 0 or off means no bound,
// stored as -1 (jsvm's negative) and shown as off; want is the error.
func sizeOrOff(get func(*Config) *int64, want string) value {
	return field[int64]{get: get,
		read: func(v string) (int64, error) {
			n, err := parseBytes(v)
			switch {
			case v == "off" || (err == nil && n == 0):
				return -1, nil
			case err != nil || n > 1<<40:
				return 0, errors.New(want)
			}
			return int64(n), nil
		},
		format: func(n int64) string {
			if n < 0 {
				return "off"
			}
			return FormatBytes(uint64(n))
		},
	}
}

func onOff(get func(*Config) *bool) value {
	return field[bool]{get: get,
		read: func(v string) (bool, error) {
			on, ok := parseSwitch(v)
			if !ok {
				return false, errors.New("want true/false, on/off, 1/0")
			}
			return on, nil
		},
		format: strconv.FormatBool,
	}
}

func choice(get func(*Config) *string, choices ...string) value {
	return field[string]{get: get,
		read: func(v string) (string, error) {
			if !slices.Contains(choices, v) {
				return "", errors.New("want one of " + strings.Join(choices, ", "))
			}
			return v, nil
		},
		format: func(v string) string { return v },
	}
}

func parseSwitch(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "true", "on", "1", "yes":
		return true, true
	case "false", "off", "0", "no":
		return false, true
	}
	return false, false
}

// parseDuration accepts Go duration syntax or a bare number of units.
func parseDuration(v string, unit time.Duration) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(unit)), nil
	}
	return time.ParseDuration(v)
}

// FormatDuration writes d the short way: 1m rather than 1m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// FormatBytes writes n in the largest binary unit that keeps one decimal
// exact enough: 512 MiB, 1.5 GiB, 900 B.
func FormatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f, i = f/1024, i+1
	}
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0") + " " + units[i]
}
