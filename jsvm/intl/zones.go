package intl

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	// Go's copy of the IANA time zone database, used where the system has
	// none (a scratch or distroless image): every zone works everywhere.
	_ "time/tzdata"
)

var zoneCache sync.Map // name -> *time.Location, or nil for an unknown zone

func loadZone(name string) *time.Location {
	if v, ok := zoneCache.Load(name); ok {
		loc, _ := v.(*time.Location)
		return loc
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		loc = nil
	}
	zoneCache.Store(name, loc)
	return loc
}

// ZoneOffset is the offset from UTC, in milliseconds, of time zone name at
// ms milliseconds after the epoch, and whether daylight saving time is in
// effect then; ok is false for a zone Go does not know. name is an IANA
// name (ICU's canonical spelling, which the database also knows as a link).
func ZoneOffset(name string, ms float64) (offsetMs float64, dst bool, ok bool) {
	loc := loadZone(name)
	if loc == nil || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0, false, false
	}
	sec := math.Floor(ms / 1000)
	t := time.Unix(int64(sec), 0).In(loc)
	_, off := t.Zone()
	return float64(off) * 1000, t.IsDST(), true
}

// DefaultTimeZone is the time zone Node's ICU takes for the process, from
// the TZ variable (getenv's) or else the link /etc/localtime: an IANA name,
// "Etc/Unknown" for an empty TZ, "" when it cannot be told (the caller
// falls back to UTC, as ICU does).
func DefaultTimeZone(getenv func(string) (string, bool)) string {
	if tz, ok := getenv("TZ"); ok {
		if tz == "" {
			return "Etc/Unknown"
		}
		return strings.TrimPrefix(tz, ":")
	}
	target, err := os.Readlink("/etc/localtime")
	if err != nil {
		return ""
	}
	target = filepath.ToSlash(target)
	if i := strings.Index(target, "zoneinfo/"); i >= 0 {
		return target[i+len("zoneinfo/"):]
	}
	return ""
}

// DefaultLocale is the locale Node's ICU takes for the process, from the
// POSIX variables LC_ALL, LC_MESSAGES and LANG, in that order: "de_DE.UTF-8"
// is "de-DE"; unset, "C" and "POSIX" are "en-US". The caller canonicalizes
// it (and falls back to en-US when it is not a language tag).
func DefaultLocale(getenv func(string) (string, bool)) string {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v, ok := getenv(name)
		if !ok || v == "" {
			continue
		}
		if i := strings.IndexAny(v, ".@"); i >= 0 {
			v = v[:i]
		}
		if v == "C" || v == "POSIX" || v == "" {
			return "en-US"
		}
		return strings.ReplaceAll(v, "_", "-")
	}
	return "en-US"
}

// ProcessDefaults are DefaultLocale and DefaultTimeZone of this process's
// environment, read once (as Go's time package reads TZ once for time.Local,
// which goja's Date uses).
var ProcessDefaults = sync.OnceValues(func() (locale, timeZone string) {
	return DefaultLocale(os.LookupEnv), DefaultTimeZone(os.LookupEnv)
})
