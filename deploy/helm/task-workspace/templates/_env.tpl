{{/*
Environment of each service, as read by services/<name>/src/config.ts (the only place each reads
process.env). Secrets come from the operator's existing Secrets by secretKeyRef, never as values.
Called with (dict "root" $ "component" "<name>"); also used by the migration Job, whose
`dist/migrate.js` reads the same variables (with "migration" true: no tracing variables, its
command does not preload tracing).
*/}}

{{- define "task-workspace.env" -}}
{{- $root := .root }}
{{- $component := .component }}
{{- $migration := .migration }}
{{- $values := index $root.Values $component -}}
{{- $facts := include "task-workspace.facts" . | fromYaml -}}
- name: LOG_LEVEL
  value: {{ $values.logLevel | quote }}
- name: HOST
  value: "0.0.0.0"
{{- with $root.Values.tracing }}
{{- if and .otlpEndpoint (not $migration) }}
{{- /* Traces (packages/common/src/tracing.ts, preloaded by the image's CMD): on only with an endpoint. */}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .otlpEndpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .protocol | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .samplerArg | toString | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "tws-%s" $component | quote }}
{{- end }}
{{- end }}
{{- if $facts.edge }}
- name: PORT
  value: {{ $values.containerPort | quote }}
{{- end }}
{{- if eq $component "gateway" }}
- name: BODY_LIMIT_BYTES
  value: {{ $values.bodyLimitBytes | int64 | quote }}
- name: TRUST_PROXY
  value: {{ $values.trustProxy | quote }}
- name: GRPC_DEADLINE_MS
  value: {{ $values.grpcDeadlineMs | int64 | quote }}
{{- /* Required by the gateway: URLs it hands out never come from a request's Host header. */}}
- name: PUBLIC_BASE_URL
  value: {{ include "task-workspace.apiPublicBaseUrl" $root | quote }}
{{- /* The MCP server: task resources under the app's URL; the authorization server its metadata names. */}}
{{- $appUrl := ternary (include "task-workspace.appUrl" $root) "" $root.Values.web.enabled }}
- name: APP_PUBLIC_URL
  value: {{ default $appUrl $values.appPublicUrl | quote }}
- name: OAUTH_AUTHORIZATION_SERVER_URL
  value: {{ default $appUrl $values.oauthAuthorizationServerUrl | quote }}
{{- /* The gateway trusts the app's authorization server (its tokens; keys fetched from the web Service in-cluster). */}}
{{- $appIssuer := default $appUrl $values.appIssuerUrl }}
{{- $webService := include "task-workspace.componentName" (dict "root" $root "component" "web") }}
{{- $inClusterJwks := printf "http://%s.%s.svc.%s:%d/oauth/jwks" $webService $root.Release.Namespace $root.Values.clusterDomain (int $root.Values.web.service.port) }}
{{- $appJwks := $values.appJwksUrl }}
{{- if and (not $appJwks) $root.Values.web.enabled (not $values.appIssuerUrl) }}
{{- $appJwks = $inClusterJwks }}
{{- end }}
- name: AUTH_APP_ISSUER_URL
  value: {{ $appIssuer | quote }}
- name: AUTH_APP_JWKS_URL
  value: {{ ternary $appJwks "" (ne $appIssuer "") | quote }}
- name: RATE_LIMIT_PER_SECOND
  value: {{ $values.rateLimit.perSecond | toString | quote }}
- name: RATE_LIMIT_BURST
  value: {{ $values.rateLimit.burst | int64 | quote }}
- name: RATE_LIMIT_SYNC_INTERVAL_MS
  value: {{ $values.rateLimit.syncIntervalMs | int64 | quote }}
- name: RATE_LIMIT_SYNC_MAX_KEYS
  value: {{ $values.rateLimit.syncMaxKeys | int64 | quote }}
- name: AUTH_FAILURES_PER_MINUTE
  value: {{ $values.rateLimit.authFailuresPerMinute | int64 | quote }}
- name: ACCESS_LOG_SAMPLE_RATIO
  value: {{ $values.accessLog.sampleRatio | toString | quote }}
- name: ACCESS_LOG_SLOW_MS
  value: {{ $values.accessLog.slowMs | int64 | quote }}
- name: AUTH_API_KEY_CACHE_TTL_MS
  value: {{ $values.authCache.apiKeyTtlMs | int64 | quote }}
- name: AUTH_MEMBERSHIP_CACHE_TTL_MS
  value: {{ $values.authCache.membershipTtlMs | int64 | quote }}
{{- range $backend := include "task-workspace.components" (dict "root" $root "fact" "backend") | fromJsonArray }}
- name: {{ upper $backend }}_GRPC_TARGET
  value: {{ include "task-workspace.grpcTarget" (dict "root" $root "component" $backend) | quote }}
{{- end }}
{{- with include "task-workspace.env.jwt" $root }}
{{- . | nindent 0 }}
{{- end }}
{{- end }}
{{- if $facts.backend }}
- name: GRPC_PORT
  value: {{ $values.grpcPort | quote }}
{{- end }}
{{- if $facts.ops }}
- name: OPS_PORT
  value: {{ $values.opsPort | quote }}
{{- end }}
{{- if $facts.database }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.postgresSecret" $root }}
      key: {{ default $root.Values.postgres.urlKey (index $root.Values.postgres.serviceUrlKeys $component) }}
- name: DATABASE_POOL_SIZE
  value: {{ $values.databasePoolSize | quote }}
{{- end }}
{{- if has $component (include "task-workspace.components" (dict "root" .root "fact" "kafka") | fromJsonArray) }}
- name: KAFKA_CLIENT_ID
  value: {{ $values.kafkaClientId | quote }}
{{- include "task-workspace.env.kafka" $root | nindent 0 }}
{{- end }}
{{- if eq $component "tasks" }}
- name: OUTBOX_BATCH_SIZE
  value: {{ $values.outbox.batchSize | int64 | quote }}
- name: OUTBOX_POLL_INTERVAL_MS
  value: {{ $values.outbox.pollIntervalMs | int64 | quote }}
- name: OUTBOX_LINGER_MS
  value: {{ $values.outbox.lingerMs | int64 | quote }}
- name: OUTBOX_STANDBY_RETRY_MS
  value: {{ $values.outbox.standbyRetryMs | int64 | quote }}
- name: OUTBOX_MAX_BACKOFF_MS
  value: {{ $values.outbox.maxBackoffMs | int64 | quote }}
- name: OUTBOX_RETENTION_MS
  value: {{ $values.outbox.retentionMs | int64 | quote }}
- name: REVOCATION_HEARTBEAT_MS
  value: {{ $values.revocation.heartbeatMs | int64 | quote }}
- name: REVOCATION_MAX_WATCHERS
  value: {{ $values.revocation.maxWatchers | int64 | quote }}
- name: IDEMPOTENCY_KEY_TTL_MS
  value: {{ $values.idempotency.keyTtlMs | int64 | quote }}
- name: IDEMPOTENCY_LOCK_TIMEOUT_MS
  value: {{ $values.idempotency.lockTimeoutMs | int64 | quote }}
- name: IDEMPOTENCY_SWEEP_INTERVAL_MS
  value: {{ $values.idempotency.sweepIntervalMs | int64 | quote }}
- name: TASK_LIST_MAX_STREAMS
  value: {{ $values.taskLists.maxStreams | int64 | quote }}
- name: TASK_LIST_STREAM_TIMEOUT_MS
  value: {{ $values.taskLists.streamTimeoutMs | int64 | quote }}
{{- end }}
{{- if eq $component "attachments" }}
- name: TASKS_GRPC_TARGET
  value: {{ include "task-workspace.grpcTarget" (dict "root" $root "component" "tasks") | quote }}
- name: GRPC_DEADLINE_MS
  value: {{ $values.grpcDeadlineMs | int64 | quote }}
- name: DOWNLOAD_URL_TTL_SECONDS
  value: {{ $values.downloadUrlTtlSeconds | int64 | quote }}
- name: SWEEP_INTERVAL_MS
  value: {{ $values.sweeper.intervalMs | int64 | quote }}
- name: SWEEP_BATCH_SIZE
  value: {{ $values.sweeper.batchSize | int64 | quote }}
- name: UPLOAD_GRACE_MS
  value: {{ $values.sweeper.uploadGraceMs | int64 | quote }}
{{- include "task-workspace.env.s3" $root | nindent 0 }}
{{- end }}
{{- if eq $component "web" }}
{{- include "task-workspace.env.web" $root | nindent 0 }}
{{- end }}
{{- if eq $component "webhooks" }}
- name: WEBHOOK_SECRET_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.webhooksSecret" $root }}
      key: {{ $root.Values.webhookSecrets.encryptionKeyKey }}
- name: KAFKA_TOPIC_PARTITIONS
  value: {{ $root.Values.kafka.topicPartitions | int64 | quote }}
- name: WEBHOOK_RETRY_DELAYS
  value: {{ $values.delivery.retryDelays | quote }}
- name: WEBHOOK_TIMEOUT_MS
  value: {{ $values.delivery.timeoutMs | int64 | quote }}
- name: WEBHOOK_RESPONSE_BODY_LIMIT_BYTES
  value: {{ $values.delivery.responseBodyLimitBytes | int64 | quote }}
- name: WEBHOOK_DELIVERY_CONCURRENCY
  value: {{ $values.delivery.concurrency | int64 | quote }}
- name: WEBHOOK_WORKSPACE_CONCURRENCY
  value: {{ $values.delivery.workspaceConcurrency | int64 | quote }}
- name: WEBHOOK_ENDPOINT_CONCURRENCY
  value: {{ $values.delivery.endpointConcurrency | int64 | quote }}
- name: WEBHOOK_ENDPOINT_QUEUE_LIMIT
  value: {{ $values.delivery.endpointQueueLimit | int64 | quote }}
- name: WEBHOOK_ENDPOINT_MAX_QUEUE_WAIT_MS
  value: {{ $values.delivery.endpointMaxQueueWaitMs | int64 | quote }}
- name: WEBHOOK_MAX_PENDING_DELIVERIES
  value: {{ $values.delivery.maxPendingDeliveries | int64 | quote }}
- name: WEBHOOK_FANOUT_BATCH_SIZE
  value: {{ $values.delivery.fanOutBatchSize | int64 | quote }}
- name: WEBHOOK_FANOUT_MAX_IN_FLIGHT
  value: {{ $values.delivery.fanOutMaxInFlight | int64 | quote }}
- name: WEBHOOK_DNS_CACHE_MAX_TTL_SECONDS
  value: {{ $values.dnsCacheMaxTtlSeconds | int64 | quote }}
- name: WEBHOOK_LOG_RETENTION_DAYS
  value: {{ $values.logRetentionDays | int64 | quote }}
- name: WEBHOOK_AUTO_DISABLE_AFTER_SECONDS
  value: {{ $values.autoDisableAfterSeconds | int64 | quote }}
{{- end }}
{{- if has $component (list "tasks" "attachments" "webhooks") }}
- name: AUDIT_RETENTION_DAYS
  value: {{ $values.audit.retentionDays | int64 | quote }}
- name: AUDIT_SWEEP_INTERVAL_MS
  value: {{ $values.audit.sweepIntervalMs | int64 | quote }}
{{- end }}
{{- with $values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The app's own settings (services/web/src/config.ts); the secrets from web.existingSecret. */}}
{{- define "task-workspace.env.web" -}}
{{- $web := .Values.web -}}
- name: APP_URL
  value: {{ include "task-workspace.appUrl" . | quote }}
- name: TRUST_PROXY
  value: {{ $web.trustProxy | quote }}
- name: BODY_LIMIT_BYTES
  value: {{ $web.bodyLimitBytes | int64 | quote }}
- name: OIDC_ISSUER_URL
  value: {{ $web.oidc.issuerUrl | quote }}
- name: OIDC_CLIENT_ID
  value: {{ $web.oidc.clientId | quote }}
- name: OIDC_CLIENT_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.webSecret" . }}
      key: {{ $web.clientSecretKey }}
- name: OIDC_CLIENT_AUTH_METHOD
  value: {{ $web.oidc.clientAuthMethod | quote }}
- name: OIDC_HTTP_TIMEOUT_MS
  value: {{ $web.oidc.httpTimeoutMs | int64 | quote }}
- name: SIGN_IN_FLOW_TIMEOUT_S
  value: {{ $web.oidc.signInFlowTimeoutSeconds | int64 | quote }}
- name: SESSION_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.webSecret" . }}
      key: {{ $web.sessionSecretKey }}
- name: SESSION_IDLE_TIMEOUT_S
  value: {{ $web.session.idleTimeoutSeconds | int64 | quote }}
- name: SESSION_ABSOLUTE_TIMEOUT_S
  value: {{ $web.session.absoluteTimeoutSeconds | int64 | quote }}
- name: SESSION_SWEEP_INTERVAL_MS
  value: {{ $web.session.sweepIntervalMs | int64 | quote }}
- name: SIGN_IN_RATE_LIMIT_PER_MINUTE
  value: {{ $web.signInRateLimitPerMinute | int64 | quote }}
- name: OAUTH_SIGNING_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.webSecret" . }}
      key: {{ $web.oauthSigningKeysKey }}
- name: OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE
  value: {{ $web.oauthRegistrationRateLimitPerMinute | int64 | quote }}
- name: TASKS_GRPC_TARGET
  value: {{ include "task-workspace.grpcTarget" (dict "root" . "component" "tasks") | quote }}
- name: WEBHOOKS_GRPC_TARGET
  value: {{ include "task-workspace.grpcTarget" (dict "root" . "component" "webhooks") | quote }}
- name: ATTACHMENTS_GRPC_TARGET
  value: {{ include "task-workspace.grpcTarget" (dict "root" . "component" "attachments") | quote }}
{{- /* The task page links attachments to their permanent download URLs at the API, as the gateway builds them. */}}
- name: API_PUBLIC_BASE_URL
  value: {{ include "task-workspace.apiPublicBaseUrl" . | quote }}
- name: GRPC_DEADLINE_MS
  value: {{ $web.grpcDeadlineMs | int64 | quote }}
- name: REVOKE_DEADLINE_MS
  value: {{ $web.revokeDeadlineMs | int64 | quote }}
{{- end }}

{{- define "task-workspace.env.kafka" -}}
- name: KAFKA_BROKERS
  value: {{ include "task-workspace.kafkaBrokers" . | quote }}
{{- if .Values.kafka.tls.enabled }}
- name: KAFKA_SSL
  value: "true"
{{- if .Values.kafka.tls.existingSecret }}
- name: KAFKA_SSL_CA_FILE
  value: /etc/task-workspace/kafka-ca/{{ .Values.kafka.tls.caKey }}
{{- end }}
{{- end }}
{{- if .Values.kafka.sasl.enabled }}
- name: KAFKA_SASL_MECHANISM
  value: {{ .Values.kafka.sasl.mechanism | quote }}
{{- if .Values.kafka.sasl.username }}
- name: KAFKA_SASL_USERNAME
  value: {{ .Values.kafka.sasl.username | quote }}
{{- else }}
- name: KAFKA_SASL_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.kafkaSaslSecret" . }}
      key: {{ .Values.kafka.sasl.usernameKey }}
{{- end }}
- name: KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.kafkaSaslSecret" . }}
      key: {{ .Values.kafka.sasl.passwordKey }}
{{- end }}
{{- end }}

{{- define "task-workspace.env.s3" -}}
- name: S3_ENDPOINT
  value: {{ include "task-workspace.s3Endpoint" . | quote }}
- name: S3_PUBLIC_ENDPOINT
  value: {{ default (include "task-workspace.s3Endpoint" .) .Values.s3.publicEndpoint | quote }}
- name: S3_REGION
  value: {{ .Values.s3.region | quote }}
- name: S3_BUCKET
  value: {{ .Values.s3.bucket | quote }}
{{- if .Values.s3.staticCredentials }}
- name: S3_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.s3Secret" . }}
      key: {{ .Values.s3.accessKeyKey }}
- name: S3_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "task-workspace.s3Secret" . }}
      key: {{ .Values.s3.secretKeyKey }}
{{- end }}
{{- end }}

{{- define "task-workspace.env.jwt" -}}
{{- if .Values.auth.jwt.enabled -}}
- name: AUTH_JWT_ISSUER
  value: {{ .Values.auth.jwt.issuer | quote }}
- name: AUTH_JWT_AUDIENCE
  value: {{ .Values.auth.jwt.audience | quote }}
- name: AUTH_JWT_ALGORITHMS
  value: {{ .Values.auth.jwt.algorithms | quote }}
- name: AUTH_JWT_CLOCK_TOLERANCE_SECONDS
  value: {{ .Values.auth.jwt.clockToleranceSeconds | int64 | quote }}
{{- if .Values.auth.jwt.jwksUrl }}
- name: AUTH_JWT_JWKS_URL
  value: {{ .Values.auth.jwt.jwksUrl | quote }}
{{- else }}
- name: AUTH_JWT_PUBLIC_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.auth.jwt.publicKeySecret }}
      key: {{ .Values.auth.jwt.publicKeyKey }}
{{- end }}
{{- end }}
{{- end }}

{{/* Volumes of a component's pod: the writable /tmp, the Kafka CA bundle, extra ones. */}}
{{- define "task-workspace.volumes" -}}
{{- $values := index .root.Values .component -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .root.Values.tmpVolumeSizeLimit }}
{{- if and (has .component (include "task-workspace.components" (dict "root" .root "fact" "kafka") | fromJsonArray)) .root.Values.kafka.tls.enabled .root.Values.kafka.tls.existingSecret }}
- name: kafka-ca
  secret:
    secretName: {{ .root.Values.kafka.tls.existingSecret }}
    items:
      - key: {{ .root.Values.kafka.tls.caKey }}
        path: {{ .root.Values.kafka.tls.caKey }}
{{- end }}
{{- with $values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "task-workspace.volumeMounts" -}}
{{- $values := index .root.Values .component -}}
- name: tmp
  mountPath: /tmp
{{- if and (has .component (include "task-workspace.components" (dict "root" .root "fact" "kafka") | fromJsonArray)) .root.Values.kafka.tls.enabled .root.Values.kafka.tls.existingSecret }}
- name: kafka-ca
  mountPath: /etc/task-workspace/kafka-ca
  readOnly: true
{{- end }}
{{- with $values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}
