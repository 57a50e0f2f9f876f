{{/*
Names, labels and small shared pieces, after the `helm create` helpers. Every helper is namespaced
with the chart name. The components are declared once, in "task-workspace.componentTable" below
(the migrations Job is a component of its own for names and labels).
*/}}

{{/*
The components, declared once: the templates range over them, in this order, and never list them.
Facts of a component (absent = false):
  edge        an HTTP edge behind the ingress: an `http` port (<name>.containerPort) on a Service of
              <name>.service.type and .port; the gateway (the API) and web (the app)
  backend     a gRPC service behind the gateway: a `grpc` port, a headless Service its callers
              balance over, a NetworkPolicy admitting the gateway and its callers
  ops         probes and /metrics on a separate `http-ops` port (<name>.opsPort); without it they
              are on `http`
  database    its own PostgreSQL schema: DATABASE_URL (postgres.existingSecret) and a pool size
  kafka       a Kafka client: KAFKA_* settings and the broker CA mount
  migrations  its image ships dist/migrate.js, which the migrations Job runs in this order
  calls       the backends it calls over gRPC (besides the gateway, which calls them all): their
              NetworkPolicies admit it
A component whose values set `enabled: false` (web, off by default) is left out of every template.
A new service is an entry here, its block in values.yaml and values.schema.json, and its settings
in _env.tpl.
*/}}
{{- define "task-workspace.componentTable" -}}
- {name: gateway, edge: true}
- {name: web, edge: true, ops: true, database: true, migrations: true, calls: [tasks, attachments, webhooks]}
- {name: tasks, backend: true, ops: true, database: true, kafka: true, migrations: true}
- {name: attachments, backend: true, ops: true, database: true, migrations: true, calls: [tasks]}
- {name: webhooks, backend: true, ops: true, database: true, kafka: true, migrations: true}
{{- end }}

{{/*
Names of the enabled components, in table order, as a JSON list (read it with fromJsonArray): all
of them for fact "", else those having the fact given ("edge", "backend", "ops", "database",
"kafka" or "migrations"). Example:
  {{- range $component := include "task-workspace.components" (dict "root" $ "fact" "") | fromJsonArray }}
*/}}
{{- define "task-workspace.components" -}}
{{- $root := .root }}
{{- $fact := .fact }}
{{- $names := list }}
{{- range include "task-workspace.componentTable" nil | fromYamlArray }}
{{- $values := index $root.Values .name }}
{{- if and (or (not (hasKey $values "enabled")) $values.enabled) (or (not $fact) (index . $fact)) }}
{{- $names = append $names .name }}
{{- end }}
{{- end }}
{{- toJson $names }}
{{- end }}

{{/* The facts of one component, as YAML (read it with fromYaml): (dict "root" $ "component" "web"). */}}
{{- define "task-workspace.facts" -}}
{{- $component := .component }}
{{- range include "task-workspace.componentTable" nil | fromYamlArray }}
{{- if eq .name $component }}
{{- toYaml . }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The enabled components that call a backend over gRPC besides the gateway (their `calls` fact), as a
JSON list: (dict "root" $ "component" "tasks").
*/}}
{{- define "task-workspace.callers" -}}
{{- $backend := .component }}
{{- $callers := list }}
{{- range $name := include "task-workspace.components" (dict "root" .root "fact" "") | fromJsonArray }}
{{- if has $backend ((include "task-workspace.facts" (dict "component" $name) | fromYaml).calls | default (list)) }}
{{- $callers = append $callers $name }}
{{- end }}
{{- end }}
{{- toJson $callers }}
{{- end }}

{{/* The chart name. */}}
{{- define "task-workspace.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name, prefix of every resource name. Truncated so that
`<fullname>-attachments-headless` (22 more characters) stays within 63.
*/}}
{{- define "task-workspace.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 41 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 41 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 41 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "task-workspace.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of a component's resources: (dict "root" $ "component" "tasks"). */}}
{{- define "task-workspace.componentName" -}}
{{- printf "%s-%s" (include "task-workspace.fullname" .root) .component }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "task-workspace.labels" -}}
helm.sh/chart: {{ include "task-workspace.chart" . }}
app.kubernetes.io/name: {{ include "task-workspace.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: task-workspace
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of a component's resources: (dict "root" $ "component" "tasks"). */}}
{{- define "task-workspace.componentLabels" -}}
{{ include "task-workspace.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Selector labels of a component's pods (never change: Deployment selectors are immutable). */}}
{{- define "task-workspace.selectorLabels" -}}
app.kubernetes.io/name: {{ include "task-workspace.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
metadata.annotations from commonAnnotations plus extra ones: (dict "root" $ "extra" map); nothing
when both are empty. Use as `{{- with include "task-workspace.annotations" (…) }}{{ . | nindent 2 }}{{ end }}`.
*/}}
{{- define "task-workspace.annotations" -}}
{{- $all := merge (dict) (.extra | default (dict)) (.root.Values.commonAnnotations | default (dict)) -}}
{{- with $all -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The ServiceAccount the pods run as. */}}
{{- define "task-workspace.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "task-workspace.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The registry of the services' images: global.imageRegistry, else image.registry. There is no default
registry: the render fails naming the values (the chart published by .github/workflows/release.yml
has image.registry and every digest set to what that release pushed).
*/}}
{{- define "task-workspace.imageRegistry" -}}
{{- $registry := default .Values.image.registry (.Values.global | default (dict)).imageRegistry | trimSuffix "/" }}
{{- if not $registry }}
{{- fail "set image.registry (or global.imageRegistry): the registry you pull the task-workspace images from, e.g. ghcr.io/<owner> for the images .github/workflows/release.yml publishes (README, \"Deploying with Helm\"); the chart has no default registry" }}
{{- end }}
{{- $registry }}
{{- end }}

{{/*
A component's image reference: (dict "root" $ "component" "tasks"). `<registry>/<repository>:<tag>`,
and `@<digest>` after it when a digest is set (the digest is what is pulled; the tag stays for people).
*/}}
{{- define "task-workspace.image" -}}
{{- $values := index .root.Values .component }}
{{- $ref := printf "%s/%s" (include "task-workspace.imageRegistry" .root) $values.image.repository }}
{{- $tag := toString (default (default .root.Chart.AppVersion .root.Values.image.tag) $values.image.tag) }}
{{- if $values.image.digest }}
{{- printf "%s:%s@%s" $ref $tag $values.image.digest }}
{{- else }}
{{- printf "%s:%s" $ref $tag }}
{{- end }}
{{- end }}

{{/*
imagePullSecrets of every pod: global.imagePullSecrets then imagePullSecrets, each name once; nothing
when both are empty. Use as `{{- with include "task-workspace.imagePullSecrets" $ }}{{ . | nindent 6 }}{{ end }}`.
*/}}
{{- define "task-workspace.imagePullSecrets" -}}
{{- $names := list }}
{{- range concat ((.Values.global | default (dict)).imagePullSecrets | default (list)) (.Values.imagePullSecrets | default (list)) }}
{{- $names = append $names .name }}
{{- end }}
{{- $names = $names | compact | uniq }}
{{- with $names }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/* The headless Service a backend's callers resolve (every ready pod's address). */}}
{{- define "task-workspace.headlessName" -}}
{{- printf "%s-headless" (include "task-workspace.componentName" .) }}
{{- end }}

{{/*
gRPC target of a backend for its callers: DNS of the headless Service, which gRPC balances
round-robin over every ready replica (the client sets the round_robin policy).
*/}}
{{- define "task-workspace.grpcTarget" -}}
{{- $values := index .root.Values .component }}
{{- printf "dns:///%s.%s.svc.%s:%d" (include "task-workspace.headlessName" .) .root.Release.Namespace .root.Values.clusterDomain (int $values.grpcPort) }}
{{- end }}

{{/*
Names of the Secrets the chart references (created by the operator, never by the chart, but for the
evaluation install: with evaluation.enabled an empty existingSecret means the generated one).
*/}}
{{- define "task-workspace.evaluationSecret" -}}
{{- printf "%s-evaluation" (include "task-workspace.fullname" .) }}
{{- end }}

{{- define "task-workspace.postgresSecret" -}}
{{- $generated := ternary (include "task-workspace.evaluationSecret" .) (printf "%s-postgres" (include "task-workspace.fullname" .)) .Values.evaluation.enabled }}
{{- default $generated .Values.postgres.existingSecret }}
{{- end }}

{{- define "task-workspace.s3Secret" -}}
{{- $generated := ternary (include "task-workspace.evaluationSecret" .) (printf "%s-s3" (include "task-workspace.fullname" .)) .Values.evaluation.enabled }}
{{- default $generated .Values.s3.existingSecret }}
{{- end }}

{{- define "task-workspace.kafkaSaslSecret" -}}
{{- default (printf "%s-kafka" (include "task-workspace.fullname" .)) .Values.kafka.sasl.existingSecret }}
{{- end }}

{{- define "task-workspace.webhooksSecret" -}}
{{- $generated := ternary (include "task-workspace.evaluationSecret" .) (printf "%s-webhooks" (include "task-workspace.fullname" .)) .Values.evaluation.enabled }}
{{- default $generated .Values.webhookSecrets.existingSecret }}
{{- end }}

{{/*
In-cluster address of an evaluation dependency: (dict "root" $ "component" "kafka" "port" 9092), as
host:port; the Service is <fullname>-<component>.
*/}}
{{- define "task-workspace.evaluationAddress" -}}
{{- printf "%s.%s.svc.%s:%d" (include "task-workspace.componentName" .) .root.Release.Namespace .root.Values.clusterDomain (int .port) }}
{{- end }}

{{/* Kafka bootstrap brokers (KAFKA_BROKERS): the evaluation broker, else kafka.brokers. */}}
{{- define "task-workspace.kafkaBrokers" -}}
{{- if .Values.evaluation.enabled }}
{{- include "task-workspace.evaluationAddress" (dict "root" . "component" "kafka" "port" 9092) }}
{{- else }}
{{- join "," .Values.kafka.brokers }}
{{- end }}
{{- end }}

{{/* The S3 endpoint the attachments service uses (S3_ENDPOINT): the evaluation MinIO, else s3.endpoint. */}}
{{- define "task-workspace.s3Endpoint" -}}
{{- if .Values.evaluation.enabled }}
{{- printf "http://%s" (include "task-workspace.evaluationAddress" (dict "root" . "component" "minio" "port" 9000)) }}
{{- else }}
{{- .Values.s3.endpoint }}
{{- end }}
{{- end }}

{{/* An evaluation dependency's image: (dict "image" .Values.evaluation.postgres.image). */}}
{{- define "task-workspace.evaluationImage" -}}
{{- $ref := printf "%s/%s:%s" .image.registry .image.repository (toString .image.tag) }}
{{- if .image.digest }}{{ printf "%s@%s" $ref .image.digest }}{{ else }}{{ $ref }}{{ end }}
{{- end }}

{{- define "task-workspace.webSecret" -}}
{{- default (printf "%s-web" (include "task-workspace.fullname" .)) .Values.web.existingSecret }}
{{- end }}

{{/*
The app's public origin (APP_URL): web.appUrl, else https://<web.ingress.hostname> with web.ingress
on (https even without web.ingress.tls: the app refuses plain http but for a loopback address, so
TLS is then terminated in front of the controller); "" when neither is set (validateValues fails).
*/}}
{{- define "task-workspace.appUrl" -}}
{{- if .Values.web.appUrl }}
{{- .Values.web.appUrl | trimSuffix "/" }}
{{- else if and .Values.web.ingress.enabled .Values.web.ingress.hostname }}
{{- printf "https://%s" .Values.web.ingress.hostname }}
{{- end }}
{{- end }}

{{/*
The API's public base URL (`{base_url}`): gateway.publicBaseUrl, else the gateway's ingress host,
else its in-cluster Service address. The gateway's PUBLIC_BASE_URL, and the web app's
API_PUBLIC_BASE_URL (its task page links attachments to their download URLs at the API).
*/}}
{{- define "task-workspace.apiPublicBaseUrl" -}}
{{- $gateway := .Values.gateway }}
{{- if $gateway.publicBaseUrl }}
{{- $gateway.publicBaseUrl }}
{{- else if and .Values.ingress.enabled .Values.ingress.hostname }}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls) .Values.ingress.hostname }}
{{- else }}
{{- printf "http://%s.%s.svc.%s:%d" (include "task-workspace.componentName" (dict "root" . "component" "gateway")) .Release.Namespace .Values.clusterDomain (int $gateway.service.port) }}
{{- end }}
{{- end }}

{{/* Fails the render on contradictory values, with a message naming them. */}}
{{- define "task-workspace.validateValues" -}}
{{- if and .Values.auth.jwt.enabled (not .Values.auth.jwt.jwksUrl) (not .Values.auth.jwt.publicKeySecret) }}
{{- fail "auth.jwt.enabled needs auth.jwt.jwksUrl or auth.jwt.publicKeySecret" }}
{{- end }}
{{- if and .Values.auth.jwt.enabled .Values.auth.jwt.jwksUrl .Values.auth.jwt.publicKeySecret }}
{{- fail "set only one of auth.jwt.jwksUrl and auth.jwt.publicKeySecret" }}
{{- end }}
{{- if and .Values.auth.jwt.enabled (not .Values.auth.jwt.issuer) }}
{{- fail "auth.jwt.enabled needs auth.jwt.issuer (the iss claim every token must carry)" }}
{{- end }}
{{- if and .Values.evaluation.enabled (not .Values.s3.staticCredentials) }}
{{- fail "evaluation.enabled needs s3.staticCredentials: the evaluation MinIO takes the generated access key" }}
{{- end }}
{{- if and .Values.evaluation.enabled (or .Values.kafka.tls.enabled .Values.kafka.sasl.enabled) }}
{{- fail "evaluation.enabled runs a plain Kafka broker: set kafka.tls.enabled and kafka.sasl.enabled to false" }}
{{- end }}
{{- if and .Values.ingress.enabled .Values.ingress.tls (not .Values.ingress.hostname) }}
{{- fail "ingress.tls needs ingress.hostname" }}
{{- end }}
{{- $web := .Values.web }}
{{- if $web.enabled }}
{{- if not $web.oidc.issuerUrl }}
{{- fail "web.enabled needs web.oidc.issuerUrl: the issuer URL of your OpenID provider, e.g. https://login.example.com/realms/acme (README, \"The app (web)\")" }}
{{- end }}
{{- if not $web.oidc.clientId }}
{{- fail "web.enabled needs web.oidc.clientId: the app's client id at your OpenID provider, registered with the redirect URI <app URL>/auth/callback" }}
{{- end }}
{{- if not (include "task-workspace.appUrl" .) }}
{{- fail "web.enabled needs its public URL: set web.appUrl (e.g. https://app.example.com), or web.ingress.enabled and web.ingress.hostname (the app URL is then https://<hostname>)" }}
{{- end }}
{{- if lt (int $web.session.absoluteTimeoutSeconds) (int $web.session.idleTimeoutSeconds) }}
{{- fail "web.session.absoluteTimeoutSeconds must not be shorter than web.session.idleTimeoutSeconds" }}
{{- end }}
{{- if and $web.ingress.enabled (not $web.ingress.hostname) }}
{{- fail "web.ingress.enabled needs web.ingress.hostname (the app's own host)" }}
{{- end }}
{{- if and $web.ingress.enabled .Values.ingress.enabled (eq $web.ingress.hostname .Values.ingress.hostname) }}
{{- fail "web.ingress.hostname must differ from ingress.hostname: the app and the API are served on different hosts" }}
{{- end }}
{{- end }}
{{- end }}
