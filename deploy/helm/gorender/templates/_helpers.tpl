{{/* Names, labels and the pieces the templates share. */}}

{{- define "gorender.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gorender.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gorender.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gorender.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gorender.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gorender.labels" -}}
helm.sh/chart: {{ include "gorender.chart" . }}
{{ include "gorender.selectorLabels" . }}
app.kubernetes.io/component: renderer
app.kubernetes.io/version: {{ include "gorender.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gorender.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gorender.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "gorender.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}{{ if eq .Values.image.variant "node" }}-node{{ end }}
{{- end }}

{{- define "gorender.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (include "gorender.imageTag" .) }}
{{- end }}
{{- end }}

{{/* The Secret holding the password, and whether the chart creates it. */}}
{{- define "gorender.secretName" -}}
{{- default (include "gorender.fullname" .) .Values.password.existingSecret }}
{{- end }}

{{- define "gorender.createSecret" -}}
{{- if and .Values.password.value (not .Values.password.existingSecret) }}true{{ end }}
{{- end }}

{{- define "gorender.hasPassword" -}}
{{- if or .Values.password.value .Values.password.existingSecret }}true{{ end }}
{{- end }}

{{/* The replicas that run at least: replicaCount, or the HPA's minimum. */}}
{{- define "gorender.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}{{ .Values.autoscaling.minReplicas | int }}{{ else }}{{ .Values.replicaCount | int }}{{ end }}
{{- end }}

{{/*
gorender.probe renders a probe from values. Helm merges maps, so a probe set
to exec, tcpSocket or grpc still carries the default httpGet: drop it, since
a probe takes one handler.
*/}}
{{- define "gorender.probe" -}}
{{- $probe := deepCopy . }}
{{- if or $probe.exec $probe.tcpSocket $probe.grpc }}
{{- $_ := unset $probe "httpGet" }}
{{- end }}
{{- toYaml $probe }}
{{- end }}

{{/*
gorender.seconds turns a gorender duration (Go syntax such as 500ms, 1m30s,
or a bare number of seconds) into whole seconds, rounded up.
*/}}
{{- define "gorender.seconds" -}}
{{- $v := toString . }}
{{- $number := "^[0-9]+(\\.[0-9]+)?" }}
{{- if regexMatch (printf "%s$" $number) $v }}
{{- ceil (float64 $v) | int }}
{{- else if regexMatch "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$" $v }}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 }}
{{- $total := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" $v -1 }}
{{- $total = addf $total (mulf (float64 (regexFind $number .)) (get $units (regexReplaceAll $number . ""))) }}
{{- end }}
{{- ceil $total | int }}
{{- else }}
{{- fail (printf "config.shutdownTimeout %q: want a duration such as 30s or 1m30s, or a number of seconds" $v) }}
{{- end }}
{{- end }}

{{/* terminationGracePeriodSeconds: the shutdown timeout plus the preStop sleep and a margin. */}}
{{- define "gorender.terminationGracePeriodSeconds" -}}
{{- if not (kindIs "invalid" .Values.terminationGracePeriodSeconds) }}
{{- .Values.terminationGracePeriodSeconds | int }}
{{- else }}
{{- $shutdown := include "gorender.seconds" (default "30s" .Values.config.shutdownTimeout) | int }}
{{- add $shutdown (.Values.preStopSleepSeconds | int) (.Values.terminationGraceMarginSeconds | int) }}
{{- end }}
{{- end }}

{{/*
gorender.cacheMaxSize is RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE: cache.maxSize
when set, else 80% of cache.sizeLimit in bytes (the rest is headroom for
uploads being staged and for bundles used in the last 5 minutes, which are
never pruned, so the kubelet does not evict the pod for filling the
volume), else "" (no limit).
*/}}
{{- define "gorender.cacheMaxSize" -}}
{{- $c := .Values.cache }}
{{- if not (kindIs "invalid" $c.maxSize) }}
{{- toString $c.maxSize }}
{{- else if $c.sizeLimit }}
{{- $q := toString $c.sizeLimit }}
{{- if kindIs "float64" $c.sizeLimit }}{{ $q = printf "%.0f" $c.sizeLimit }}{{ end }}
{{- $m := regexFind "^[0-9]+(\\.[0-9]+)?" $q }}
{{- $suffix := trimPrefix $m $q }}
{{- $scale := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 }}
{{- if or (not $m) (not (hasKey $scale $suffix)) }}
{{- fail (printf "cache.sizeLimit %q: cannot derive cache.maxSize from it; want a quantity such as 2Gi or 500M, or set cache.maxSize" $q) }}
{{- end }}
{{- printf "%d" (int64 (floor (mulf (float64 $m) (get $scale $suffix) 0.8))) }}
{{- end }}
{{- end }}

{{/*
gorender.configEnv lists the renderer's environment, one entry per variable
of server/config.go (tools/chartcheck checks that none is missing). Unset
(null or "") values are left out so gorender's defaults apply.
*/}}
{{- define "gorender.configEnv" -}}
{{- $c := .Values.config }}
{{- $envs := list
  (list "RENDERER_HOST" $c.host)
  (list "RENDERER_PORT" $c.port)
  (list "RENDERER_SERVER_BUNDLE_CACHE_PATH" .Values.cache.mountPath)
  (list "RENDERER_SERVER_BUNDLE_CACHE_MAX_SIZE" (include "gorender.cacheMaxSize" .))
  (list "RENDERER_WORKERS_COUNT" $c.workersCount)
  (list "MAX_VM_POOL_SIZE" $c.maxVmPoolSize)
  (list "VM_POOL_ROLLOUT_DRAIN_TIMEOUT" $c.vmPoolRolloutDrainTimeout)
  (list "RENDERER_RENDER_TIMEOUT" $c.renderTimeout)
  (list "RENDERER_QUEUE_TIMEOUT" $c.queueTimeout)
  (list "RENDERER_STREAM_IDLE_TIMEOUT" $c.streamIdleTimeout)
  (list "RENDERER_SHUTDOWN_TIMEOUT" $c.shutdownTimeout)
  (list "RENDERER_MAX_RENDERS_PER_RUNTIME" $c.maxRendersPerRuntime)
  (list "RENDERER_MAX_QUARANTINED_RUNTIMES" $c.maxQuarantinedRuntimes)
  (list "RENDERER_MAX_RESULT_SIZE" $c.maxResultSize)
  (list "RENDERER_CONSOLE_MAX_LINES" $c.consoleMaxLines)
  (list "RENDERER_CONSOLE_MAX_BYTES" $c.consoleMaxBytes)
  (list "RENDERER_ALL_WORKERS_RESTART_INTERVAL" $c.allWorkersRestartInterval)
  (list "RENDERER_DELAY_BETWEEN_INDIVIDUAL_WORKER_RESTARTS" $c.delayBetweenIndividualWorkerRestarts)
  (list "GRACEFUL_WORKER_RESTART_TIMEOUT" $c.gracefulWorkerRestartTimeout)
  (list "RENDERER_MAX_HEAP" $c.maxHeap)
  (list "RENDERER_MAX_ALLOCATION" $c.maxAllocation)
  (list "RENDERER_QUICKJS_MEMORY_LIMIT" $c.quickjsMemoryLimit)
  (list "RENDERER_REWRITE_STRING_BUILDS" $c.rewriteStringBuilds)
  (list "RENDERER_STUB_TIMERS" $c.stubTimers)
  (list "RENDERER_SUPPORT_MODULES" $c.supportModules)
  (list "RENDERER_LOG_LEVEL" $c.logLevel)
  (list "RENDERER_LOG_FORMAT" $c.logFormat)
  (list "RENDERER_LOG_HTTP_LEVEL" $c.logHttpLevel)
  (list "RENDERER_METRICS" .Values.metrics.enabled)
  (list "RENDERER_JS_ENGINE" (default (ternary "node" "goja" (eq .Values.image.variant "node")) $c.jsEngine))
  (list "RENDERER_NODE_PATH" $c.nodePath)
  (list "RENDERER_NODE_HEAP_LIMIT" $c.nodeHeapLimit)
  (list "RENDERER_NODE_SEMI_SPACE" $c.nodeSemiSpace)
  (list "RENDERER_NODE_QUEUE_DEPTH" $c.nodeQueueDepth)
  (list "RENDERER_NODE_MAX_PROCESSES" $c.nodeMaxProcesses)
  (list "RENDERER_NODE_LOAD_TIMEOUT" $c.nodeLoadTimeout)
  (list "REPLAY_SERVER_ASYNC_OPERATION_LOGS" $c.replayServerAsyncOperationLogs)
  (list "RENDERER_CURRENT_GENERATION_MANIFEST" $c.currentGenerationManifest)
  (list "RENDERER_MAX_CONNECTION_AGE" $c.maxConnectionAge)
  (list "RENDERER_UNAUTHENTICATED_BODY_BUDGET" $c.unauthenticatedBodyBudget)
  (list "RENDERER_WRITE_TIMEOUT" $c.writeTimeout)
  (list "RENDERER_BODY_READ_TIMEOUT" $c.bodyReadTimeout)
  (list "RENDERER_AUTH_TIMEOUT" $c.authTimeout)
  (list "RENDERER_MAX_CONNECTIONS" $c.maxConnections)
  (list "RENDERER_MAX_UNAUTHENTICATED_CONNECTIONS" $c.maxUnauthenticatedConnections)
  (list "RENDERER_MAX_BODY_SIZE" $c.maxBodySize)
  (list "RENDERER_MAX_FIELD_SIZE" $c.maxFieldSize)
  (list "RENDERER_MAX_PARTS" $c.maxParts)
  (list "RENDERER_MAX_HEADER_SIZE" $c.maxHeaderSize)
  (list "RENDERER_HEADER_TIMEOUT" $c.headerTimeout)
  (list "RENDERER_IDLE_TIMEOUT" $c.idleTimeout)
  (list "RENDERER_MAX_CONCURRENT_STREAMS" $c.maxConcurrentStreams)
  (list "RENDERER_INCREMENTAL_LINE_TIMEOUT" $c.incrementalLineTimeout)
  (list "RENDERER_PULL_MODE_IDLE_TIMEOUT" $c.pullModeIdleTimeout)
  (list "RENDERER_SOURCE_MAP_CACHE_SIZE" $c.sourceMapCacheSize)
  (list "OTEL_EXPORTER_OTLP_ENDPOINT" .Values.tracing.endpoint)
  (list "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" .Values.tracing.tracesEndpoint)
  (list "OTEL_EXPORTER_OTLP_PROTOCOL" .Values.tracing.protocol)
  (list "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" .Values.tracing.tracesProtocol)
  (list "OTEL_TRACES_EXPORTER" .Values.tracing.exporter)
  (list "OTEL_SERVICE_NAME" .Values.tracing.serviceName)
  (list "OTEL_TRACES_SAMPLER" .Values.tracing.sampler)
  (list "OTEL_TRACES_SAMPLER_ARG" .Values.tracing.samplerArg)
  (list "SENTRY_DSN" .Values.errorTracking.sentryDsn)
  (list "SENTRY_ENVIRONMENT" .Values.errorTracking.sentryEnvironment)
  (list "SENTRY_RELEASE" .Values.errorTracking.sentryRelease)
  (list "SENTRY_TRACES_SAMPLE_RATE" .Values.errorTracking.sentryTracesSampleRate)
  (list "SENTRY_DEBUG" .Values.errorTracking.sentryDebug)
  (list "HONEYBADGER_API_KEY" .Values.errorTracking.honeybadgerApiKey)
  (list "HONEYBADGER_ENV" .Values.errorTracking.honeybadgerEnv)
  (list "HONEYBADGER_ENDPOINT" .Values.errorTracking.honeybadgerEndpoint)
  (list "RENDERER_ERROR_REPORT_TIMEOUT" .Values.errorTracking.reportTimeout)
  (list "RAILS_ENV" $c.railsEnv)
  (list "NODE_ENV" $c.nodeEnv)
}}
{{- range $envs }}
{{- $value := index . 1 }}
{{- if not (or (kindIs "invalid" $value) (eq (toString $value) "")) }}
- name: {{ index . 0 }}
  value: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Fail early, with the value to set, on combinations that cannot work. */}}
{{/*
gorender.ruleSelector: the PromQL label matchers of this release's series in
the alert rules: metrics.prometheusRule.selector, else the job and namespace
a ServiceMonitor of this chart gives them (the Service's name).
*/}}
{{- define "gorender.ruleSelector" -}}
{{- with .Values.metrics.prometheusRule.selector -}}
{{ . }}
{{- else -}}
job="{{ include "gorender.fullname" . }}", namespace="{{ .Release.Namespace }}"
{{- end -}}
{{- end }}

{{- define "gorender.validate" -}}
{{- if and .Values.password.value .Values.password.existingSecret }}
{{- fail "password: set password.value or password.existingSecret, not both" }}
{{- end }}
{{- if not (include "gorender.hasPassword" .) }}
{{- $dev := list "development" "test" }}
{{- $rails := toString (default "" .Values.config.railsEnv) }}
{{- $node := toString (default "" .Values.config.nodeEnv) }}
{{- if not (and (or $rails $node) (or (not $rails) (has $rails $dev)) (or (not $node) (has $node $dev))) }}
{{- fail "password: gorender refuses to start without a password in production: set password.value or password.existingSecret (the Rails app's config.renderer_password)" }}
{{- end }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled" }}
{{- end }}
{{- if and (or .Values.metrics.prometheusRule.enabled .Values.metrics.dashboard.enabled) (not .Values.metrics.enabled) }}
{{- fail "metrics.prometheusRule.enabled and metrics.dashboard.enabled need metrics.enabled" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.service.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs service.enabled (a ServiceMonitor scrapes a Service)" }}
{{- end }}
{{- if and .Values.networkPolicy.enabled (not .Values.networkPolicy.railsPodSelector) }}
{{- fail "networkPolicy.enabled needs networkPolicy.railsPodSelector (the labels of the Rails pods), else it would let every pod in" }}
{{- end }}
{{- if .Values.preseed.enabled }}
{{- if not .Values.preseed.image.repository }}
{{- fail "preseed.enabled needs preseed.image.repository (an image holding the pre-seeded bundle cache)" }}
{{- end }}
{{- if not .Values.preseed.image.tag }}
{{- fail "preseed.enabled needs preseed.image.tag: pin the release whose bundles to seed" }}
{{- end }}
{{- if and (not .Values.preseed.command) (not (hasPrefix "/" .Values.preseed.sourcePath)) }}
{{- fail "preseed.enabled needs preseed.sourcePath, the absolute path of the cache inside preseed.image" }}
{{- end }}
{{- end }}
{{- if and (eq (toString .Values.config.jsEngine) "node") (ne .Values.image.variant "node") }}
{{- fail "config.jsEngine node needs image.variant node: the static image has no Node.js" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not (or .Values.autoscaling.targetCPUUtilizationPercentage .Values.autoscaling.targetMemoryUtilizationPercentage .Values.autoscaling.metrics)) }}
{{- fail "autoscaling.enabled needs a metric: targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or metrics" }}
{{- end }}
{{- end }}
