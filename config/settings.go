// The configuration table: what a row is, and the rows.

package config

import (
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gorender/gorender/jsvm/engines"
	"github.com/gorender/gorender/tracing"
)

// A setting is one row of the configuration table: an environment
// variable, its default, how it is read and what it means. The table of
// docs/configuration.md is this table (TestConfigurationTable).
type setting struct {
	// Name is the environment variable.
	Name string
	// Default is read like a value when the variable is unset or empty.
	// "" means that the default is computed (Value then reads "") and
	// DefaultDoc says how.
	Default    string
	DefaultDoc string
	// Engine is the only engine the setting applies to; "" for all.
	Engine string
	// Doc is what it does (Markdown, one line: the third column of
	// docs/configuration.md's table; links are relative to docs/).
	Doc   string
	Value value
}

// value reads a setting into a Config and shows it back.
type value interface {
	// parse sets v into l.c; an error says what is wanted instead.
	parse(l *loader, v string) error
	// show is the effective value for the start-up log ("": not logged).
	show(c *Config) string
}

// settings is the configuration table, in the order rows are read (a
// computed default may use the rows above it) and listed in
// docs/configuration.md. To add a variable: a Config field, a row here, then
// `go test ./config -run TestConfigurationTable -update` writes it into
// docs/configuration.md.
var settings = []setting{
	{
		Name: "RENDERER_PORT", Default: "3800",
		Doc:   "listen port (`-p PORT` overrides)",
		Value: number(func(c *Config) *int { return &c.Port }, 0, 65535),
	},
	{
		Name: "RENDERER_HOST", Default: "localhost",
		Doc:   "bind address (`0.0.0.0` in containers)",
		Value: text(func(c *Config) *string { return &c.Host }),
	},
	{
		Name: "RENDERER_PASSWORD", DefaultDoc: "unset",
		Doc: "shared secret; required unless `RAILS_ENV`/`NODE_ENV` say `development` or `test`",
		Value: custom{
			read: func(l *loader, v string) error { l.c.Password = v; return nil },
			format: func(c *Config) string {
				if c.Password == "" {
					return "unset"
				}
				return "set"
			},
		},
	},
	{
		Name:       "RENDERER_SERVER_BUNDLE_CACHE_PATH",
		DefaultDoc: "nearest `.node-renderer-bundles` above the working directory, else `/tmp/react-on-rails-pro-node-renderer-bundles`",
		Doc:        "bundle cache root (`RENDERER_BUNDLE_PATH` is a deprecated alias)",
		Value:      custom{read: parseCachePath, format: func(c *Config) string { return c.CachePath }},
	},
	{
		Name: "RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE", Default: "0",
		Doc:   "size limit of the bundle cache: past it, the least recently used bundles that no gorender on the cache has loaded or is storing, that no `.current-generations` declaration names and that were not used in the last 5 minutes are removed with their companion files (see [Bundle cache](bundle-cache.md)). Sizes like `2GiB`; `0` is no limit (a full volume still removes them, one per failed write)",
		Value: size(func(c *Config) *uint64 { return &c.CacheMaxSize }),
	},
	{
		Name: "RENDERER_SOURCE_MAP_CACHE_SIZE", Default: "64MiB",
		Doc:   "memory for the parsed source maps of loaded bundles, which put original files and lines in error answers, load-error logs and `getStackTrace` (see [Source maps](source-maps.md)); a map is parsed on the first error that needs it, least recently used ones make room. Sizes like `64MiB`; `0`: no mapping",
		Value: size(func(c *Config) *uint64 { return &c.SourceMapCacheSize }),
	},
	{
		Name:       "RENDERER_WORKERS_COUNT",
		DefaultDoc: "`NODE_RENDERER_CONCURRENCY` (the Node renderer's name, read when this one is unset), else the CPUs (Go's `GOMAXPROCS` at start: affinity and cgroup limit)",
		Doc:        "JavaScript runtimes per loaded bundle: renders in parallel; with `RENDERER_JS_ENGINE=node`, the Node.js processes started at start and the most one isolation group (an entry bundle and its dependency bundles) has: its renders in parallel (see `RENDERER_NODE_MAX_PROCESSES`)",
		Value: orComputed(number(func(c *Config) *int { return &c.WorkersCount }, 1, 1024),
			func(l *loader) {
				// The Node renderer's own fallback name, read the same way.
				if v := l.getenv("NODE_RENDERER_CONCURRENCY"); v != "" {
					l.concurrency = v
					return
				}
				l.c.WorkersCount = startProcs
			}),
	},
	{
		Name: "MAX_VM_POOL_SIZE", Default: "4",
		Doc:   "bundles kept loaded at once (least recently used evicted)",
		Value: number(func(c *Config) *int { return &c.MaxVMPoolSize }, 1, 1024),
	},
	{
		Name: "VM_POOL_ROLLOUT_DRAIN_TIMEOUT", Default: "60",
		Doc:   "seconds an evicted bundle's in-flight renders may take to finish",
		Value: duration(func(c *Config) *time.Duration { return &c.DrainTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_RENDER_TIMEOUT", Default: "30s",
		Doc:   "deadline of one render; past it the render is interrupted, its runtime replaced, and the answer is `400 Render timed out after …`",
		Value: duration(func(c *Config) *time.Duration { return &c.RenderTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_QUEUE_TIMEOUT", Default: "10s",
		Doc:   "how long a render may wait for a free runtime before `503` with `Retry-After`",
		Value: duration(func(c *Config) *time.Duration { return &c.QueueTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_SHUTDOWN_TIMEOUT", Default: "30s",
		Doc:   "on SIGTERM/SIGINT, how long in-flight requests may finish",
		Value: duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_INCREMENTAL_LINE_TIMEOUT", Default: "20s",
		Doc:   "the incremental route: the longest wait for the next NDJSON line before the request's end; past it the render is stopped",
		Value: duration(func(c *Config) *time.Duration { return &c.IncrementalLineTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_PULL_MODE_IDLE_TIMEOUT", Default: "300s",
		Doc:   "the incremental route in pull mode: the longest wait for the next line, and for the stream's next output",
		Value: duration(func(c *Config) *time.Duration { return &c.PullModeIdleTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_STREAM_IDLE_TIMEOUT", Default: "20s",
		Doc:   "a streamed answer that produces nothing (and takes no incremental update) for this long is ended abruptly and its runtime released; a stream that keeps producing is never cut. JavaScript that never yields after the stream started (a loop in a stream's pull, a timer's callback) is interrupted 1 s later and its runtime replaced, as at the render deadline",
		Value: duration(func(c *Config) *time.Duration { return &c.StreamIdleTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_WRITE_TIMEOUT", Default: "20s",
		Doc:   "an answer whose client takes none of its bytes for this long (a full socket, a closed h2 flow-control window) is ended: a stream is reset (HTTP/1.1: its connection closed) and the runtime it held is released. An answer that keeps leaving, however slowly, is never cut",
		Value: duration(func(c *Config) *time.Duration { return &c.WriteTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_MAX_BODY_SIZE", Default: "100MiB",
		Doc:   "the largest request body, else `413` (PROTOCOL.md §12)",
		Value: bytesAtLeast(func(c *Config) *int64 { return &c.MaxBodySize }, 1<<10),
	},
	{
		Name: "RENDERER_MAX_FIELD_SIZE", Default: "10MiB",
		Doc:   "the largest non-file multipart field and incremental NDJSON line, else `413`",
		Value: bytesAtLeast(func(c *Config) *int64 { return &c.MaxFieldSize }, 1<<10),
	},
	{
		Name: "RENDERER_MAX_PARTS", Default: "1000",
		Doc:   "the most parts of a multipart body, else `413`",
		Value: number(func(c *Config) *int { return &c.MaxParts }, 1, 1<<20),
	},
	{
		Name: "RENDERER_MAX_HEADER_SIZE", Default: "64KiB",
		Doc:   "the largest request header fields (HTTP/1.1: plus 4 KiB of slack; h2c: the header list size), else `431` or a reset stream",
		Value: bytesAtLeast(func(c *Config) *int64 { return &c.MaxHeaderSize }, 4<<10),
	},
	{
		Name: "RENDERER_HEADER_TIMEOUT", Default: "10s",
		Doc:   "how long a new connection or request may take to send its headers (and the h2c preface)",
		Value: duration(func(c *Config) *time.Duration { return &c.HeaderTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_IDLE_TIMEOUT", Default: "2m",
		Doc:   "a connection with no request in flight is closed after this long (h2c: no open stream)",
		Value: duration(func(c *Config) *time.Duration { return &c.IdleTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_MAX_CONCURRENT_STREAMS", Default: "250",
		Doc:   "requests at once on one h2c connection (SETTINGS_MAX_CONCURRENT_STREAMS)",
		Value: number(func(c *Config) *int { return &c.MaxConcurrentStreams }, 1, 1<<16),
	},
	{
		Name: "RENDERER_BODY_READ_TIMEOUT", Default: "10s",
		Doc:   "the longest wait for the next bytes of a request body: bytes must keep arriving, or the request is answered `408` (the incremental route's windows between update lines are its own, see [Streams across bundles](compatibility.md#streams-across-bundles))",
		Value: duration(func(c *Config) *time.Duration { return &c.BodyReadTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_AUTH_TIMEOUT", Default: "30s",
		Doc:   "how long after its headers a request may take to show its password: a JSON, form or NDJSON body must arrive whole, a multipart body up to its `password` part, within it, however steadily it trickles, else `408`",
		Value: duration(func(c *Config) *time.Duration { return &c.AuthTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_MAX_CONNECTIONS", DefaultDoc: "¾ of the descriptor limit (`ulimit -n`), at most 4096",
		Doc: "client connections open at once. At the cap a new connection still gets in (it may be a probe): the oldest connection that never carried an authenticated request is closed to make room; only when all are authenticated is the new one closed. " +
			"Counted in `gorender_connections_open` and `gorender_connections_shed_total`",
		Value: orComputed(number(func(c *Config) *int { return &c.MaxConnections }, 1, 1<<20),
			func(l *loader) { l.c.MaxConnections = defaultMaxConnections() }),
	},
	{
		Name: "RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS", Default: strconv.Itoa(DefaultMaxUnauthenticatedConnections),
		Doc: "client connections open at once that never carried an authenticated request (clients without the password, probes, scrapes; at most `RENDERER_MAX_CONNECTIONS`): " +
			"each may buffer up to 1 MiB of request body over h2c before a handler reads it, so their number bounds what clients without the password cost ([Limits](limits.md#what-a-client-without-the-password-can-cost)). " +
			"At the cap a new connection gets in and the oldest unauthenticated one is closed (`gorender_connections_shed_total{reason=\"evicted\"}`); a Rails connection authenticates on its first request and no longer counts",
		Value: number(func(c *Config) *int { return &c.MaxUnauthenticatedConnections }, 1, 1<<20),
	},
	{
		Name: "RENDERER_MAX_CONNECTION_AGE", Default: "0",
		Doc:   "a client connection older than this (±10% jitter) is retired gracefully at its next answer: `Connection: close` over HTTP/1.1, a graceful GOAWAY over h2c (streams in flight finish), so long-lived connections rebalance across replicas; `0` is never",
		Value: duration(func(c *Config) *time.Duration { return &c.MaxConnectionAge }, time.Second, orZero),
	},
	{
		Name: "RENDERER_UNAUTHENTICATED_BODY_BUDGET", Default: "128MiB",
		Doc: "bytes, process-wide, that requests may hold before their password is checked: a JSON, form, multipart or NDJSON body carries its password inside, so it is read first. " +
			"Each such request is charged 64 KiB and its header bytes at its first read, then every body byte, until its password passes or it is answered; requests without the password hold at most twice the budget. " +
			"Over it `503` with `Retry-After`; a body that alone needs more is `413`. Raw render requests (password in `Authorization`) and multipart bodies with the password part first are not charged past it",
		Value: bytesAtLeast(func(c *Config) *int64 { return &c.UnauthenticatedBudget }, 1<<20),
	},
	{
		Name: "RENDERER_STUB_TIMERS", Default: "true",
		Doc:   "timers are no-ops: true if unset, empty or exactly `true` (upstream's reading; any other value than `true`/`false` is warned about); with `RENDERER_SUPPORT_MODULES` timers are always real",
		Value: custom{read: parseStubTimers, format: func(c *Config) string { return strconv.FormatBool(c.StubTimers && !c.SupportModules) }},
	},
	{
		Name: "RENDERER_SUPPORT_MODULES", Default: "false",
		Doc:   "the [Node-compatible environment](compatibility.md#the-node-compatible-environment-renderer_support_modulestrue); on for `true`, `TRUE`, `yes`, `YES` (upstream's set), off for anything else, with a warning unless `false`, `FALSE`, `no` or `NO`",
		Value: custom{read: parseSupportModules, format: func(c *Config) string { return strconv.FormatBool(c.SupportModules) }},
	},
	{
		Name:       "REPLAY_SERVER_ASYNC_OPERATION_LOGS",
		DefaultDoc: "`true` iff `NODE_ENV=development`",
		Doc:        "keep console output of a render's awaited work in its `consoleReplayScript`",
		Value: orComputed(onOff(func(c *Config) *bool { return &c.ReplayAsyncLogs }),
			func(l *loader) { l.c.ReplayAsyncLogs = l.getenv("NODE_ENV") == "development" }),
	},
	{
		Name: "RENDERER_MAX_RENDERS_PER_RUNTIME", Default: "0",
		Doc:   "recycle a runtime after that many renders (replaced in the background); with `node`, also each Node.js process after that many; `0` is never",
		Value: number(func(c *Config) *int { return &c.MaxRendersPerRuntime }, 0, 1<<31-1),
	},
	{
		Name: "RENDERER_MAX_RESULT_SIZE", Default: "64MiB",
		Doc:   "largest result a buffered render may answer, in bytes of UTF-8; a longer one is answered `400` naming this variable, not sent (streamed answers are sent as they are produced). `0` is no limit",
		Value: size(func(c *Config) *uint64 { return &c.MaxResultSize }),
	},
	{
		Name: "RENDERER_CONSOLE_MAX_LINES", Default: "10000",
		Doc:   "console lines a render keeps for replay (`console.history`, which react-on-rails replays into the page); past it, or past `RENDERER_CONSOLE_MAX_BYTES`, the history ends with one line saying how many more were left out. `0` is no limit",
		Value: custom{read: parseConsoleMaxLines, format: func(c *Config) string { return strconv.Itoa(max(c.ConsoleMaxLines, 0)) }},
	},
	{
		Name: "RENDERER_CONSOLE_MAX_BYTES", Default: "4MiB",
		Doc:   "text a render's console history keeps, counted over the string arguments of its lines (UTF-16 code units: a byte each for ASCII; 8 for any other argument); past it, as past `RENDERER_CONSOLE_MAX_LINES`. `0` is no limit",
		Value: custom{read: parseConsoleMaxBytes, format: func(c *Config) string { return FormatBytes(uint64(max(c.ConsoleMaxBytes, 0))) }},
	},
	{
		Name:       "RENDERER_MAX_QUARANTINED_RUNTIMES",
		DefaultDoc: "CPUs (as `RENDERER_WORKERS_COUNT`)",
		Doc:        "runtimes that ignored their render's interrupt (each burns a core until its JavaScript returns) that may still run: a stuck runtime is replaced while fewer run, past it it keeps its slot until it stops; at the bound `/ready` answers `503` `quarantine_full` (so the orchestrator stops routing to the pod) and an error is logged; `gorender_runtimes_quarantined` and `gorender_runtimes_quarantined_limit` show it",
		Value: orComputed(number(func(c *Config) *int { return &c.MaxQuarantined }, 1, 1<<16),
			func(l *loader) { l.c.MaxQuarantined = startProcs }),
	},
	{
		Name: "RENDERER_ALL_WORKERS_RESTART_INTERVAL", DefaultDoc: "unset",
		Doc: "minutes; with the next one (both or neither): recycle every runtime on that schedule, one at a time, while the others serve; with `node`, also every Node.js process",
		Value: orComputed(duration(func(c *Config) *time.Duration { return &c.RecycleInterval }, time.Minute, positive),
			func(*loader) {}),
	},
	{
		Name: "RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS", DefaultDoc: "unset",
		Doc: "minutes between two runtimes' recycling on that schedule",
		Value: shownAs(orComputed(duration(func(c *Config) *time.Duration { return &c.RecycleDelay }, time.Minute, orZero),
			func(*loader) {}),
			func(c *Config) string {
				if c.RecycleInterval == 0 {
					return "off"
				}
				return FormatDuration(c.RecycleDelay)
			}),
	},
	{
		Name: "GRACEFUL_WORKER_RESTART_TIMEOUT", DefaultDoc: "the render timeout",
		Doc: "seconds a runtime due for recycling may finish its render before it is interrupted",
		Value: orComputed(duration(func(c *Config) *time.Duration { return &c.RecycleGrace }, time.Second, positive),
			func(l *loader) { l.c.RecycleGrace = l.c.RenderTimeout }),
	},
	{
		Name: "GOMEMLIMIT", DefaultDoc: "90% of the cgroup memory limit",
		Doc:   "Go's own variable; when unset gorender derives it from the container's limit",
		Value: custom{read: parseMemoryLimit, format: showMemoryLimit},
	},
	{
		Name: "GOMAXPROCS", DefaultDoc: "the CPU limit, at least `2` with goja and quickjs",
		Doc:   "Go's own variable; when unset gorender runs at least two Ps even on one CPU with the in-process engines: with one, network wake-ups and the collector wait behind the running render (p99 of a small page 74–108 ms against 17 ms, see [decisions/gomaxprocs.md](decisions/gomaxprocs.md)). With `node` no render runs in gorender and a second P on one CPU only costs wake-ups (10–25% more CPU per request on gorender's side). Runtimes per bundle default to the CPUs, not to this",
		Value: custom{read: parseProcs, format: func(c *Config) string { return strconv.Itoa(c.Procs) }},
	},
	{
		Name: "GOGC", Default: "200",
		Doc:   "Go's own variable; when unset gorender uses 200 instead of Go's 100: renders allocate many times their live data and the collector's CPU is render time (about 16% less CPU per render for a larger heap, see [decisions/gogc.md](decisions/gogc.md)); `GOMEMLIMIT` still bounds the heap",
		Value: custom{read: parseGCPercent, format: showGCPercent},
	},
	{
		Name: "RENDERER_MAX_HEAP", DefaultDoc: "80% of the container's memory limit, else off",
		Doc: "when the Go heap stays above this after a collection, the longest-running render is interrupted and answered like a timeout (approximate: the heap is shared). Sizes like `512MiB`, `2GiB`; `0` is off",
		Value: orComputed(size(func(c *Config) *uint64 { return &c.MaxHeap }),
			// 80% of the hard limit, under the 90% soft one.
			func(l *loader) { l.c.MaxHeap = l.c.MemoryLimit / 10 * 8 * 10 / 9 }),
	},
	{
		Name: "RENDERER_CURRENT_GENERATION_MANIFEST", DefaultDoc: "unset",
		Doc:   "absolute path of `<cache>/.current-generations/<generation>.json`, `{\"bundles\": [\"<id>\", …]}`: validated at start (exit 1 if a bundle is missing), the bundles loaded and their pools filled while `/health` already answers; `/ready` says `waiting_for_current_generation` until done",
		Value: text(func(c *Config) *string { return &c.GenerationManifest }),
	},
	{
		Name: "RENDERER_LOG_LEVEL", Default: "info",
		Doc: "`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`",
		Value: custom{
			read: func(l *loader, v string) (err error) {
				l.c.LogLevel, l.c.LogSilent, err = parseLogLevel(v)
				return err
			},
			format: func(c *Config) string { return showLogLevel(c.LogLevel, c.LogSilent) },
		},
	},
	{
		Name: "RENDERER_LOG_FORMAT", DefaultDoc: "`text` when standard error is a terminal, else `json`",
		Doc: "`json`: one JSON object a line, for machines; `text`: readable lines, the start-up configuration as a block of the settings that differ from their defaults",
		Value: custom{
			read: func(l *loader, v string) error {
				if v != "" && v != LogJSON && v != LogText {
					return errors.New("want " + LogJSON + " or " + LogText)
				}
				l.c.LogFormat = v
				return nil
			},
			format: func(c *Config) string { return c.LogFormat }, // unset: not logged
		},
	},
	{
		Name: "RENDERER_LOG_HTTP_LEVEL", Default: "error",
		Doc: "least level of per-request logs (answers log at `info`, 5xx at `error` except the probes `/health` and `/ready`)",
		Value: custom{
			read: func(l *loader, v string) error {
				level, silent, err := parseLogLevel(v)
				if silent {
					level = slog.LevelError + 100
				}
				l.c.LogHTTPLevel = level
				return err
			},
			format: func(c *Config) string { return showLogLevel(c.LogHTTPLevel, c.LogHTTPLevel > slog.LevelError) },
		},
	},
	{
		Name: "RENDERER_METRICS", Default: "true",
		Doc:   "serve `/metrics`",
		Value: onOff(func(c *Config) *bool { return &c.Metrics }),
	},
	{
		Name: "OTEL_EXPORTER_OTLP_ENDPOINT", DefaultDoc: "unset",
		Doc:   "the OpenTelemetry collector's base URL, e.g. `http://otel-collector:4318` (`http/protobuf`) or `http://otel-collector:4317` (`grpc`; `https://` for TLS): setting it turns [traces](observability.md#traces) on. Over HTTP traces go to its path + `/v1/traces`",
		Value: otlpEndpoint(func(c *Config) *string { return &c.Tracing.Endpoint }),
	},
	{
		Name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", DefaultDoc: "unset",
		Doc:   "the collector's URL for traces alone, used as is (over HTTP, the full URL with its path); wins over the one above and also turns traces on",
		Value: otlpEndpoint(func(c *Config) *string { return &c.Tracing.TracesEndpoint }),
	},
	{
		Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Default: tracing.ProtocolHTTPProtobuf,
		Doc: "the OTLP transport: `http/protobuf`, `http/json` or `grpc`",
		// The start-up log shows the protocol in effect once, on the next row.
		Value: shownAs(choice(func(c *Config) *string { return &c.Tracing.Protocol }, otlpProtocols...),
			func(*Config) string { return "" }),
	},
	{
		Name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", DefaultDoc: "`OTEL_EXPORTER_OTLP_PROTOCOL`",
		Doc: "the OTLP transport of traces, when it differs",
		Value: tracingOnly(orComputed(choice(func(c *Config) *string { return &c.Tracing.Protocol }, otlpProtocols...),
			func(*loader) {})),
	},
	{
		Name: "OTEL_TRACES_EXPORTER", DefaultDoc: "`otlp` when one of the endpoints above is set, else `none`",
		Doc:   "`otlp` exports traces (to `http://localhost:4318` when no endpoint is set), `none` turns them off whatever else is set",
		Value: custom{read: parseTracesExporter, format: func(c *Config) string { return c.Tracing.Exporter }},
	},
	{
		Name: "OTEL_SDK_DISABLED", Default: "false",
		Doc:   "`true` turns traces off whatever the variables above say",
		Value: custom{read: parseSDKDisabled, format: func(*Config) string { return "" }},
	},
	{
		Name: "OTEL_SERVICE_NAME", DefaultDoc: "`service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `gorender`",
		Doc:   "the traces' `service.name`",
		Value: tracingOnly(custom{read: parseServiceName, format: func(c *Config) string { return c.Tracing.ServiceName }}),
	},
	{
		Name: "OTEL_TRACES_SAMPLER", Default: "parentbased_always_on",
		Doc:   "which requests are traced: `parentbased_*` follow the sampled flag of the request's `traceparent` and apply the rest of the name to requests without one; `always_on`, `always_off`, `traceidratio` ignore it",
		Value: tracingOnly(choice(func(c *Config) *string { return &c.Tracing.Sampler }, tracing.Samplers...)),
	},
	{
		Name: "OTEL_TRACES_SAMPLER_ARG", Default: "1.0",
		Doc:   "the ratio of requests the `traceidratio` samplers trace, `0`–`1`",
		Value: tracingOnly(ratio(func(c *Config) *float64 { return &c.Tracing.SamplerArg })),
	},
	{
		Name: "SENTRY_DSN", DefaultDoc: "unset",
		Doc:   "the Sentry project's DSN: setting it sends [errors](observability.md#error-tracking) to Sentry through its Go SDK (a DSN the SDK cannot read stops the start)",
		Value: custom{read: parseSentryDSN, format: func(c *Config) string { return showURL(c.ErrorTracking.SentryDSN) }},
	},
	{
		Name: "SENTRY_ENVIRONMENT", DefaultDoc: "unset",
		Doc:   "the environment Sentry files the events under (the SDK's default when unset)",
		Value: sentryOnly(text(func(c *Config) *string { return &c.ErrorTracking.SentryEnvironment })),
	},
	{
		Name: "SENTRY_RELEASE", DefaultDoc: "`gorender@<version>`",
		Doc:   "the release Sentry files the events under",
		Value: sentryOnly(text(func(c *Config) *string { return &c.ErrorTracking.SentryRelease })),
	},
	{
		Name: "SENTRY_TRACES_SAMPLE_RATE", Default: "0",
		Doc:   "the ratio of requests sent to Sentry as transactions, `0`–`1`, whatever an incoming `sentry-trace` header says, at most 50 a second (`0`: none; [traces](observability.md#traces) over OTLP are separate)",
		Value: sentryOnly(ratio(func(c *Config) *float64 { return &c.ErrorTracking.SentryTracesSampleRate })),
	},
	{
		Name: "SENTRY_DEBUG", Default: "false",
		Doc:   "log what the Sentry SDK does (at `info`)",
		Value: sentryOnly(onOff(func(c *Config) *bool { return &c.ErrorTracking.SentryDebug })),
	},
	{
		Name: "HONEYBADGER_API_KEY", DefaultDoc: "unset",
		Doc: "the Honeybadger project's API key: setting it sends the same [errors](observability.md#error-tracking) to Honeybadger through its Go client",
		Value: custom{
			read: func(l *loader, v string) error { l.c.ErrorTracking.HoneybadgerAPIKey = v; return nil },
			format: func(c *Config) string {
				if c.ErrorTracking.HoneybadgerAPIKey == "" {
					return ""
				}
				return "set"
			},
		},
	},
	{
		Name: "HONEYBADGER_ENV", DefaultDoc: "unset",
		Doc:   "the environment Honeybadger files the events under",
		Value: honeybadgerOnly(text(func(c *Config) *string { return &c.ErrorTracking.HoneybadgerEnv })),
	},
	{
		Name: "HONEYBADGER_ENDPOINT", Default: "https://api.honeybadger.io",
		Doc:   "Honeybadger's API base URL (its notices go to `/v1/notices`)",
		Value: honeybadgerOnly(custom{read: parseHoneybadgerEndpoint, format: func(c *Config) string { return showURL(c.ErrorTracking.HoneybadgerEndpoint) }}),
	},
	{
		Name: "RENDERER_ERROR_REPORT_TIMEOUT", Default: "5s",
		Doc:   "the longest one send of an error to Sentry or Honeybadger takes (events wait in the clients' bounded queues meanwhile, never a render)",
		Value: errorTrackingOnly(duration(func(c *Config) *time.Duration { return &c.ErrorTracking.SendTimeout }, time.Second, positive)),
	},
	{
		Name: "RENDERER_JS_ENGINE", Default: engines.Auto,
		Doc:   "`auto`: `node` where a Node.js 20+ runs here confined (`RENDERER_NODE_PATH`, else `node` on `PATH`), else `goja`, and the start-up log says which and why; `node` (renders in Node.js processes gorender supervises, at V8's speed), `goja` or `quickjs` (pure Go, in gorender's process) pin one, see [Engines](engines.md)",
		Value: custom{read: parseEngine, format: func(c *Config) string { return c.JSEngine }},
	},
	{
		Name: "RENDERER_REWRITE_STRING_BUILDS", Default: "true", Engine: "goja",
		Doc:   "goja only: when a bundle is loaded, rewrite react-dom's `html += chunk` accumulators (quadratic on goja's flat strings) into array joins; output is byte-identical (see [decisions/string-builds.md](decisions/string-builds.md)). `false` runs the bundle exactly as uploaded",
		Value: onOff(func(c *Config) *bool { return &c.RewriteStringBuilds }),
	},
	{
		Name: "RENDERER_MAX_ALLOCATION", Default: "256MiB",
		Doc:   "largest single allocation a render may make through a host function (`crypto.randomBytes`, `TextEncoder`/`TextDecoder`, `fs` reads, strings copied into Go) or, on goja, a built-in sized by its caller (`ArrayBuffer` and typed arrays, so `Buffer`; `String.prototype.repeat`, `padStart`, `padEnd`; `Array.prototype.join`): over it a `RangeError` in JavaScript, as Node throws past its own limits, before the memory is taken (the memory guards act as memory grows; one call must not jump past them). On quickjs never more than `RENDERER_QUICKJS_MEMORY_LIMIT`; the node engine bounds each process's memory outside its V8 heap instead (`RLIMIT_DATA`, see [What confines bundle code](node-engine.md#what-confines-bundle-code)); `0`/`off`: none",
		Value: sizeOrOff(func(c *Config) *int64 { return &c.MaxAllocation }, "want a size such as 64MiB or 1GiB, or 0/off for no bound"),
	},
	{
		Name: "RENDERER_QUICKJS_MEMORY_LIMIT", Default: "512MiB", Engine: "quickjs",
		Doc:   "memory of each quickjs runtime (outside the Go heap, invisible to `GOMEMLIMIT`); a render that passes it is answered like a timeout and its runtime replaced; `0`/`off`: none",
		Value: sizeOrOff(func(c *Config) *int64 { return &c.QuickJSMemoryLimit }, "want a size such as 512MiB or 2GiB, or 0/off for no limit"),
	},
	{
		Name: "RENDERER_NODE_PATH", DefaultDoc: "`node` on `PATH`", Engine: "node",
		Doc:   "the Node.js executable (20 or newer) the node engine runs; gorender refuses to start without one",
		Value: text(func(c *Config) *string { return &c.NodePath }),
	},
	{
		Name: "RENDERER_NODE_MAX_PROCESSES", Engine: "node", DefaultDoc: "2 × `RENDERER_WORKERS_COUNT`",
		Doc: "the most node engine processes alive at once. A process belongs to one isolation group, the bundles of one render set (an entry bundle and its dependency bundles), which has up to `RENDERER_WORKERS_COUNT` processes; the default lets two groups (one deployment's bundle and the next one's during a rolling deploy, or an RSC pair) each have all of theirs. Past it, a group that lacks processes takes the least recently used idle one of another group (see [The node engine](node-engine.md#how-many-processes-and-why)). At least `RENDERER_WORKERS_COUNT`",
		Value: orComputed(number(func(c *Config) *int { return &c.NodeMaxProcesses }, 1, 4096),
			func(l *loader) { l.c.NodeMaxProcesses = 2 * l.c.WorkersCount }),
	},
	{
		Name: "RENDERER_NODE_HEAP_LIMIT", Engine: "node",
		DefaultDoc: "45% of the container's memory limit split among `RENDERER_NODE_MAX_PROCESSES` processes (at least 64 MiB), else V8's default",
		Doc:        "V8 heap limit of each node engine process (`--max-old-space-size`); a render that passes it costs its process and is answered like a timeout. Sizes like `512MiB`; `0`: V8's default",
		Value: orComputed(custom{read: parseNodeHeapLimit, format: showNodeHeapLimit},
			func(l *loader) {
				if l.c.MemoryLimit > 0 {
					l.c.NodeHeapLimit = max(l.c.MemoryLimit/2/uint64(max(l.c.NodeMaxProcesses, l.c.WorkersCount)), minNodeHeapLimit)
				}
			}),
	},
	{
		Name: "RENDERER_NODE_SEMI_SPACE", Default: "32MiB", Engine: "node",
		Doc:   "V8 semi-space size of each node engine process (`--max-semi-space-size`), where a render's short-lived objects are made: the young generation grows to up to three of them as renders allocate, and keeps them. Twice V8's default: a large page's render (1.8 MB of HTML) outgrew V8's own and cost about 30% more CPU with it (see [decisions/node-semi-space.md](decisions/node-semi-space.md)). Sizes like `16MiB`, whole MiB; `0`: V8's default (16 MiB)",
		Value: custom{read: parseNodeSemiSpace, format: showNodeSemiSpace},
	},
	{
		Name: "RENDERER_NODE_QUEUE_DEPTH", Default: "4", Engine: "node",
		Doc:   "renders a node engine process holds at once when none is idle: the one it runs and the others queued in its pipe, which it starts without waiting for gorender (fewer process switches per render); a queued render moves to a process that becomes idle, waits at most the queue timeout, and its render timeout runs from its start; `1`: none queued",
		Value: number(func(c *Config) *int { return &c.NodeQueueDepth }, 1, 64),
	},
	{
		Name: "RENDERER_NODE_LOAD_TIMEOUT", Default: "60s", Engine: "node",
		Doc:   "the longest one bundle's evaluation in one node engine process may take, whoever waits for it (a render, a background load, a replacement process loading its predecessor's bundles): past it the process is killed and replaced (`load_deadline`) and the load fails; a render waiting for a bundle's load is answered `400` `The bundle failed to load: …`, whether it is the bundle's first load or its load in a process that lacks it. A render waiting for a load stops at its own deadline if that comes first (for a first load, the longer of the render timeout and 30 s), which costs the process too",
		Value: duration(func(c *Config) *time.Duration { return &c.NodeLoadTimeout }, time.Second, positive),
	},
	{
		Name: "RENDERER_ENABLE_HEALTH_ENDPOINTS", DefaultDoc: "—",
		Doc:   "accepted; `/health` and `/ready` are always on",
		Value: custom{read: func(*loader, string) error { return nil }, format: func(*Config) string { return "" }},
	},
}
