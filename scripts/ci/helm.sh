#!/usr/bin/env bash
# CI stage: the Helm chart, the Prometheus alerts and the Grafana dashboard, validated offline.
#
#   1. tools, pinned and cached in ~/.cache/task-workspace: helm (go install), kubernetes-validate
#      (PyPI, in a virtualenv), promtool (Debian's prometheus package, scripts/ci/ensure-promtool.sh);
#   2. values.yaml documented, typed in values.schema.json and listed in the chart README;
#   3. helm lint --strict, and helm template with the defaults and every ci/*-values.yaml file;
#      values the schema or the templates must reject are rejected;
#   4. every rendered manifest checked against the Kubernetes $KUBERNETES_VERSION API types, strictly
#      (unknown fields fail), plus the chart's own security rules, and the containers' environment
#      against the variables services/*/src/config.ts read (the services grow: the chart must follow);
#   5. the PrometheusRule as rendered, deploy/prometheus/alerts.yaml (check + unit tests) and every
#      dashboard query parsed by promtool; each alert has a runbook.
#
# Exits non-zero on the first failure. Rendered manifests stay in $TWS_CACHE_DIR/helm-ci/ to look at.
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

CHART=deploy/helm/task-workspace
OUT="$TWS_CACHE_DIR/helm-ci"
# One run at a time per machine (checkouts side by side share $OUT): the next waits for the lock.
mkdir -p "$TWS_CACHE_DIR"
exec 9>"$OUT.lock"
flock 9
rm -rf "$OUT" && mkdir -p "$OUT"

step "tools: helm $HELM_VERSION, kubernetes-validate, promtool"
ensure_helm
ensure_venv
bash scripts/ci/ensure-promtool.sh
PY="$VENV/bin/python"

step "chart values: documented in values.yaml, typed in values.schema.json, listed in README.md"
"$PY" deploy/helm/tools/values_doc.py "$CHART"

step "alerts: the chart's copy is deploy/prometheus/alerts.yaml"
cmp -s deploy/prometheus/alerts.yaml "$CHART/files/alerts.yaml" ||
  fail "$CHART/files/alerts.yaml differs from deploy/prometheus/alerts.yaml: cp deploy/prometheus/alerts.yaml $CHART/files/alerts.yaml"

step "dashboard: the chart's copy is deploy/grafana/task-workspace.json"
cmp -s deploy/grafana/task-workspace.json "$CHART/files/task-workspace.json" ||
  fail "$CHART/files/task-workspace.json differs from deploy/grafana/task-workspace.json: cp deploy/grafana/task-workspace.json $CHART/files/task-workspace.json"

# The ci/*-values.yaml files (production-values.yaml is the production example the README points to)
# and the evaluation install. The chart has no default registry: the ci files name theirs, as every
# install must; "defaults" and the evaluation values (published with the chart, which then has its
# registry) get one here.
values_files=("$CHART"/ci/*-values.yaml "$CHART/values-evaluation.yaml")
registry=(--set image.registry=registry.example.com/platform)
registry_unless_ci() { # values file: the --set a render of it needs
  case $1 in */ci/*) ;; *) printf '%s\n' "${registry[@]}" ;; esac
}

step "helm lint --strict (defaults, ${values_files[*]##*/})"
"$HELM" lint "$CHART" --strict --kube-version "$KUBERNETES_VERSION" --quiet "${registry[@]}"
for values in "${values_files[@]}"; do
  mapfile -t extra < <(registry_unless_ci "$values")
  "$HELM" lint "$CHART" --strict --kube-version "$KUBERNETES_VERSION" --quiet "${extra[@]}" -f "$values"
done

step "helm template (defaults, ${values_files[*]##*/})"
render() { # name, extra helm args...
  local name=$1
  shift
  "$HELM" template task-workspace "$CHART" --namespace task-workspace --kube-version "$KUBERNETES_VERSION" "$@" >"$OUT/$name.yaml"
  printf '    rendered %s (%s lines)\n' "$OUT/$name.yaml" "$(wc -l <"$OUT/$name.yaml")"
}
render defaults "${registry[@]}"
for values in "${values_files[@]}"; do
  name=$(basename "$values" .yaml)
  mapfile -t extra < <(registry_unless_ci "$values")
  render "$name" "${extra[@]}" -f "$values"
done

step "images: a registry is required; global.imageRegistry and pull secrets honoured; digests preferred"
expect_rejected_with() { # message, helm args...: the render fails and says the message
  local message=$1
  shift
  if "$HELM" template task-workspace "$CHART" --kube-version "$KUBERNETES_VERSION" "$@" >/dev/null 2>"$OUT/rejected.err"; then
    fail "helm template accepted $*, which must fail ($message)"
  fi
  grep -qF "$message" "$OUT/rejected.err" || fail "helm template $* failed without saying '$message': $(head -c 300 "$OUT/rejected.err")"
  printf '    rejected as it must (%s)\n' "$message"
}
expect_rejected_with "set image.registry (or global.imageRegistry)"
expect_rejected_with "set image.registry (or global.imageRegistry)" -f "$CHART/values-evaluation.yaml"
"$HELM" template task-workspace "$CHART" --kube-version "$KUBERNETES_VERSION" "${registry[@]}" \
  --set global.imageRegistry=mirror.example.com:5000/tws --set 'global.imagePullSecrets[0].name=mirror' \
  --set 'imagePullSecrets[0].name=regcred' --set 'imagePullSecrets[1].name=mirror' \
  --set tasks.image.digest=sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa >"$OUT/global.yaml.txt"
grep -q 'image: "mirror.example.com:5000/tws/task-workspace/gateway:0.1.0"' "$OUT/global.yaml.txt" ||
  fail "global.imageRegistry does not override image.registry"
grep -q 'image: "mirror.example.com:5000/tws/task-workspace/tasks:0.1.0@sha256:a\{64\}"' "$OUT/global.yaml.txt" ||
  fail "tasks.image.digest is not in the tasks image reference"
[ "$(grep -c -- '- name: mirror$' "$OUT/global.yaml.txt")" = "$(grep -c '^      imagePullSecrets:$' "$OUT/global.yaml.txt")" ] &&
  [ "$(grep -c -- '- name: regcred$' "$OUT/global.yaml.txt")" = "$(grep -c '^      imagePullSecrets:$' "$OUT/global.yaml.txt")" ] ||
  fail "global.imagePullSecrets and imagePullSecrets are not both on every pod, each once"
grep -q '@sha256:0\{63\}1"' "$OUT/production-values.yaml" ||
  fail "ci/production-values.yaml: the gateway's digest is not in its image reference"
printf '    global.imageRegistry, global.imagePullSecrets + imagePullSecrets (deduplicated) and digests render as documented\n'

step "helm template rejects invalid values"
expect_rejected() { # reason, helm args...
  local reason=$1
  shift
  if "$HELM" template task-workspace "$CHART" --kube-version "$KUBERNETES_VERSION" "${registry[@]}" "$@" >/dev/null 2>"$OUT/rejected.err"; then
    fail "helm template accepted $*, which must fail ($reason)"
  fi
  printf '    rejected (%s): %s\n' "$reason" "$(grep -v -e '^$' -e "don't meet the specifications" -e '^task-workspace:$' "$OUT/rejected.err" | head -1 | cut -c1-150)"
}
expect_rejected "schema: wrong type" --set gateway.replicaCount=two
expect_rejected "schema: unknown key" --set gateway.replicas=2
expect_rejected "schema: enum" --set tasks.logLevel=verbose
expect_rejected "schema: digest format" --set webhooks.image.digest=latest
expect_rejected "schema: registry format" --set global.imageRegistry=https://ghcr.io/acme
expect_rejected "evaluation without static S3 credentials" -f "$CHART/values-evaluation.yaml" --set s3.staticCredentials=false
expect_rejected "min.insync.replicas above the replication factor" --set kafka.topicMinInsyncReplicas=4
expect_rejected "JWT without a key source" --set auth.jwt.enabled=true --set auth.jwt.issuer=https://idp.example.com/
web_on=(--set web.enabled=true --set web.oidc.issuerUrl=https://idp.example.com/ --set web.oidc.clientId=tws --set web.appUrl=https://app.example.com)
expect_rejected "web without an OpenID issuer" --set web.enabled=true --set web.oidc.clientId=tws --set web.appUrl=https://app.example.com
expect_rejected "web without an app URL" --set web.enabled=true --set web.oidc.issuerUrl=https://idp.example.com/ --set web.oidc.clientId=tws
expect_rejected "web on the API's host" "${web_on[@]}" --set ingress.enabled=true --set web.ingress.enabled=true --set web.ingress.hostname=api.task-workspace.local
expect_rejected "schema: web.appUrl with a path" "${web_on[@]}" --set web.appUrl=https://app.example.com/tasks
expect_rejected "schema: web client authentication method" "${web_on[@]}" --set web.oidc.clientAuthMethod=private_key_jwt

step "kinds and security rules of the rendered manifests"
"$PY" deploy/helm/tools/ci_checks.py kinds "$OUT/defaults.yaml" Deployment=4 Service=7 PodDisruptionBudget=4 \
  HorizontalPodAutoscaler=4 NetworkPolicy=4 Job=1 ServiceAccount=1 Ingress=0 ServiceMonitor=0 PrometheusRule=0 ConfigMap=1
# The ci/*-values.yaml files enable the app (web, off by default): its Deployment, Service, PDB, HPA,
# Ingress, NetworkPolicy and ServiceMonitor come on top of the four services'.
"$PY" deploy/helm/tools/ci_checks.py kinds "$OUT/production-values.yaml" Deployment=5 Service=8 Ingress=2 \
  NetworkPolicy=5 HorizontalPodAutoscaler=5 PodDisruptionBudget=5 Job=1 ServiceMonitor=2 PrometheusRule=1 ConfigMap=1
# The evaluation install: the four services once each (no HPA, no PDB), PostgreSQL, Kafka and MinIO as
# StatefulSets with their Services, the Kafka ConfigMap and the one generated Secret.
"$PY" deploy/helm/tools/ci_checks.py kinds "$OUT/values-evaluation.yaml" Deployment=4 StatefulSet=3 Service=10 \
  Secret=1 ConfigMap=2 HorizontalPodAutoscaler=0 PodDisruptionBudget=0 NetworkPolicy=4 Job=1
"$PY" deploy/helm/tools/ci_checks.py kinds "$OUT/options-values.yaml" Deployment=5 Service=8 HorizontalPodAutoscaler=0 \
  NetworkPolicy=0 PodDisruptionBudget=4 ServiceAccount=0 Ingress=1 ServiceMonitor=2 ConfigMap=0
for rendered in "$OUT"/*.yaml; do
  "$PY" deploy/helm/tools/ci_checks.py security "$rendered"
done

step "environment: the chart sets what services/*/src/config.ts (and migrate.ts) read, and nothing else"
"$PY" deploy/helm/tools/ci_checks.py env "$OUT"/*.yaml

step "kubernetes-validate --strict against Kubernetes $KUBERNETES_VERSION"
for rendered in "$OUT"/*.yaml; do
  # Each object is checked against the API types; CRDs (ServiceMonitor, PrometheusRule) have no
  # schema there and are reported as skipped: the PrometheusRule is checked by promtool below.
  "$VENV/bin/kubernetes-validate" --strict --kubernetes-version "$KUBERNETES_VERSION" --quiet "$rendered" ||
    fail "$rendered does not validate against Kubernetes $KUBERNETES_VERSION (strict)"
  printf '    %s: %s objects valid\n' "$(basename "$rendered")" "$(grep -c '^kind: ' "$rendered")"
done

step "promtool: alerts (rules file, unit tests, PrometheusRule as rendered), dashboard queries, runbooks"
promtool check rules deploy/prometheus/alerts.yaml
promtool test rules deploy/prometheus/*.test.yaml
for name in production-values options-values; do
  "$PY" deploy/helm/tools/ci_checks.py prometheusrule "$OUT/$name.yaml" "$OUT/$name.rules.yaml"
  promtool check rules "$OUT/$name.rules.yaml"
done
grep -q 'runbook_url: https://git.example.com/platform/task-workspace/-/blob/main/docs/runbooks.md#' "$OUT/production-values.rules.yaml" ||
  fail "the rendered PrometheusRule does not use metrics.prometheusRule.runbookBaseUrl"
grep -q 'TaskWorkspaceWebhookDeadDeliveries' "$OUT/options-values.rules.yaml" &&
  fail "metrics.prometheusRule.disabledAlerts did not leave TaskWorkspaceWebhookDeadDeliveries out"
"$PY" deploy/helm/tools/ci_checks.py dashboard-rules deploy/grafana/task-workspace.json "$OUT/dashboard.rules.yaml"
promtool check rules "$OUT/dashboard.rules.yaml"
"$PY" deploy/helm/tools/ci_checks.py runbooks deploy/prometheus/alerts.yaml docs/runbooks.md

finish "scripts/ci/helm.sh"
