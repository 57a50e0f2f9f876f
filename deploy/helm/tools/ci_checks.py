#!/usr/bin/env python3
"""Checks of rendered manifests, rules and dashboard that scripts/ci/helm.sh runs (PyYAML needed).

    ci_checks.py kinds RENDERED.yaml Kind[=count] ...     the render holds these kinds (optionally exactly N)
    ci_checks.py security RENDERED.yaml                   every pod runs non-root, read-only, no caps, seccomp
    ci_checks.py prometheusrule RENDERED.yaml OUT.yaml    writes the PrometheusRule's groups as a rules file
    ci_checks.py dashboard-rules DASHBOARD.json OUT.yaml  writes every panel query as a recording rule
    ci_checks.py runbooks ALERTS.yaml RUNBOOKS.md         every alert has a runbook section and a matching runbook_url
    ci_checks.py env RENDERED.yaml ...                    the chart sets every variable the services read, and only those
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter

import yaml


def documents(path: str) -> list[dict]:
    with open(path) as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc]


def kinds(path: str, *wanted: str) -> list[str]:
    found = Counter(doc["kind"] for doc in documents(path))
    problems = []
    for item in wanted:
        kind, _, count = item.partition("=")
        if count and found[kind] != int(count):
            problems.append(f"{path}: {found[kind]} {kind} rendered, expected {count}")
        elif not count and found[kind] == 0:
            problems.append(f"{path}: no {kind} rendered")
    if not problems:
        print(f"    {path}: " + ", ".join(f"{count} {kind}" for kind, count in sorted(found.items())))
    return problems


def pod_specs(doc: dict, kinds: tuple[str, ...] = ("Deployment", "Job")) -> list[dict]:
    if doc["kind"] in kinds:
        return [doc["spec"]["template"]["spec"]]
    return []


# The evaluation install's PostgreSQL, Kafka and MinIO (StatefulSets) and the Job's wait for them
# follow the security rules, but are not services: their environment is not checked against config.ts.
EVALUATION_CONTAINERS = {"evaluation-wait"}


def security(path: str) -> list[str]:
    problems = []
    for doc in documents(path):
        for spec in pod_specs(doc, ("Deployment", "Job", "StatefulSet")):
            where = f"{doc['kind']}/{doc['metadata']['name']}"
            pod = spec.get("securityContext", {})
            if not pod.get("runAsNonRoot") or pod.get("seccompProfile", {}).get("type") != "RuntimeDefault":
                problems.append(f"{where}: pod securityContext must set runAsNonRoot and seccomp RuntimeDefault")
            if spec.get("automountServiceAccountToken") is not False:
                problems.append(f"{where}: automountServiceAccountToken must be false")
            if not any(v.get("name") == "tmp" and "emptyDir" in v for v in spec.get("volumes", [])):
                problems.append(f"{where}: no emptyDir volume for /tmp")
            for container in spec.get("initContainers", []) + spec["containers"]:
                context = container.get("securityContext", {})
                name = f"{where} container {container['name']}"
                if context.get("readOnlyRootFilesystem") is not True:
                    problems.append(f"{name}: readOnlyRootFilesystem must be true")
                if context.get("allowPrivilegeEscalation") is not False:
                    problems.append(f"{name}: allowPrivilegeEscalation must be false")
                if context.get("capabilities", {}).get("drop") != ["ALL"]:
                    problems.append(f"{name}: capabilities must drop ALL")
                if not any(m.get("mountPath") == "/tmp" for m in container.get("volumeMounts", [])):
                    problems.append(f"{name}: /tmp is not mounted")
                if "resources" not in container or "requests" not in container["resources"]:
                    problems.append(f"{name}: no resource requests")
                if doc["kind"] in ("Deployment", "StatefulSet") and not all(k in container for k in ("livenessProbe", "readinessProbe")):
                    problems.append(f"{name}: liveness and readiness probes are required")
    if not problems:
        print(f"    {path}: every pod non-root, read-only root filesystem, no capabilities, seccomp RuntimeDefault, /tmp emptyDir")
    return problems


def prometheusrule(path: str, out: str) -> list[str]:
    rules = [doc for doc in documents(path) if doc["kind"] == "PrometheusRule"]
    if len(rules) != 1:
        return [f"{path}: expected one PrometheusRule, found {len(rules)}"]
    with open(out, "w") as handle:
        yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, handle, sort_keys=False)
    return []


def dashboard_rules(path: str, out: str) -> list[str]:
    with open(path) as handle:
        dashboard = json.load(handle)
    problems, exprs = [], []
    panels = []
    for panel in dashboard.get("panels", []):
        panels.append(panel)
        panels.extend(panel.get("panels", []))  # the panels of a collapsed row
    for panel in panels:
        for target in panel.get("targets", []):
            if "expr" in target:
                exprs.append((panel.get("title", ""), target["expr"]))
    ids = [panel.get("id") for panel in panels]
    if len(ids) != len(set(ids)):
        problems.append(f"{path}: duplicate panel ids")
    if not exprs:
        problems.append(f"{path}: no queries found")
    # Grafana's variables become what they expand to, so promtool can parse every query.
    substitutions = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$namespace": ".*"}
    rules = []
    for index, (title, expr) in enumerate(exprs):
        for variable, value in substitutions.items():
            expr = expr.replace(variable, value)
        if "$" in expr:
            problems.append(f"{path}: panel '{title}' uses an unknown variable: {expr}")
        rules.append({"record": f"dashboard:query_{index}", "expr": expr})
    with open(out, "w") as handle:
        yaml.safe_dump({"groups": [{"name": "dashboard-queries", "rules": rules}]}, handle, sort_keys=False)
    print(f"    {path}: {len(exprs)} queries in {len(ids)} panels")
    return problems


def runbooks(alerts_path: str, runbooks_path: str) -> list[str]:
    with open(alerts_path) as handle:
        alerts = [rule for group in yaml.safe_load(handle)["groups"] for rule in group["rules"] if "alert" in rule]
    with open(runbooks_path) as handle:
        headings = {re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                    for line in handle if line.startswith("## ")}
    problems = []
    for rule in alerts:
        anchor = rule["alert"].lower()
        url = rule.get("annotations", {}).get("runbook_url", "")
        if anchor not in headings:
            problems.append(f"{runbooks_path}: no '## {rule['alert']}' section")
        if not url.endswith(f"#{anchor}"):
            problems.append(f"{alerts_path}: {rule['alert']} runbook_url should end with #{anchor}")
        if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
            problems.append(f"{alerts_path}: {rule['alert']} needs a severity label (critical, warning or info)")
    if not problems:
        print(f"    {len(alerts)} alerts, each with a severity, a runbook section and a runbook_url")
    return problems


# Variables a service reads that the chart leaves to `<service>.extraEnv` on purpose.
EXTRA_ENV_ONLY = {
    "WEBHOOK_ALLOWED_CIDRS": "exempts ranges from the SSRF guard: development and tests only",
    "WEBHOOK_DNS_SERVERS": "tests point it at a fake DNS server; in a cluster the system resolver is right",
    "WEBHOOK_EXTRA_CA_FILE": "extra CAs for endpoints (tests); mount a file with extraVolumes if ever needed",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "a traces-only OTLP URL; tracing.otlpEndpoint (OTEL_EXPORTER_OTLP_ENDPOINT) is the chart's",
    "OTEL_SDK_DISABLED": "turns tracing off with an endpoint set; leaving tracing.otlpEndpoint empty does that",
    "OTEL_BSP_MAX_QUEUE_SIZE": "the batch span processor's bounds: the SDK's defaults suit the default sampling",
    "OTEL_BSP_SCHEDULE_DELAY": "the batch span processor's bounds: the SDK's defaults suit the default sampling",
    "OTEL_BSP_EXPORT_TIMEOUT": "the batch span processor's bounds: the SDK's defaults suit the default sampling",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "the batch span processor's bounds: the SDK's defaults suit the default sampling",
}
# Variables the chart sets only when the feature behind them is enabled (the services default them).
SET_WHEN_ENABLED = {
    "KAFKA_SSL": "kafka.tls.enabled",
    "KAFKA_SSL_CA_FILE": "kafka.tls.existingSecret",
    "KAFKA_SASL_MECHANISM": "kafka.sasl.enabled",
    "KAFKA_SASL_USERNAME": "kafka.sasl.enabled",
    "KAFKA_SASL_PASSWORD": "kafka.sasl.enabled",
}
# Read by Node.js itself, not by config.ts.
RUNTIME_VARIABLES = {"NODE_EXTRA_CA_CERTS", "NODE_OPTIONS"}
# Set by the image (docker/Dockerfile), not by the chart: the chart does not know what was built.
IMAGE_VARIABLES = {"GIT_REVISION": "the commit built, for task_workspace_build_info (--build-arg REVISION, set by scripts/images/build.sh)"}
CONFIG_KEY = re.compile(r"^\s*([A-Z][A-Z0-9_]*):", re.M)


def tracing_variables() -> set[str]:
    """The keys of packages/common/src/tracing-config.ts's tracingConfigShape (read by the tracing preload)."""
    import pathlib
    source = (pathlib.Path(__file__).resolve().parents[3] / "packages" / "common" / "src" / "tracing-config.ts").read_text()
    block = re.search(r"export const tracingConfigShape = \{(.*?)\n\};", source, re.S)
    if not block:
        raise SystemExit("ci_checks: tracingConfigShape not found in packages/common/src/tracing-config.ts")
    return set(CONFIG_KEY.findall(block.group(1)))


def read_variables(service: str, entry: str) -> set[str]:
    """The variables a service's entry point reads: config.ts keys and the shared shapes it spreads;
    migrate.ts: its own, or what runMigrateCommand reads for it (packages/common/src/migrate-command.ts)."""
    import pathlib
    src = pathlib.Path(__file__).resolve().parents[3] / "services" / service / "src"
    config_source = (src / "config.ts").read_text()
    config = set(CONFIG_KEY.findall(config_source)) | shared_shapes(config_source)
    if entry == "main":
        # The OTEL_* variables of the tracing preload every service's command loads (docker/Dockerfile CMD).
        config |= tracing_variables()
    if entry == "main":
        return config
    migrate = (src / "migrate.ts").read_text()
    if "runMigrateCommand(" in migrate:
        return migrate_command_variables(migrate, config)
    return set(CONFIG_KEY.findall(migrate)) | shared_shapes(migrate) | (config if "loadConfig(" in migrate else set())


def migrate_command_variables(migrate: str, config: set[str]) -> set[str]:
    """What runMigrateCommand reads: its first parseConfig (always), its second (the Kafka connection and
    topic settings) when the service passes `topics`, and the service's config.ts when it passes `config: loadConfig`."""
    import pathlib
    command = (pathlib.Path(__file__).resolve().parents[3] / "packages" / "common" / "src" / "migrate-command.ts").read_text()
    shapes = re.findall(r"parseConfig\(\{(.*?)\}\)", command, re.S)
    if len(shapes) != 2:
        raise SystemExit("ci_checks: packages/common/src/migrate-command.ts no longer has its two parseConfig({...}) calls: update migrate_command_variables")
    def keys(shape: str) -> set[str]:
        return set(re.findall(r"\b([A-Z][A-Z0-9_]*):", shape)) | shared_shapes(shape)
    read = keys(shapes[0])
    if re.search(r"\btopics:", migrate):
        read |= keys(shapes[1])
    if re.search(r"\bconfig:\s*loadConfig\b", migrate):
        read |= config
    return read


def shared_shapes(source: str) -> set[str]:
    """Keys of the shared config shapes a file spreads (`...kafkaTopicEnv`, `...backendEnv({…})`), from packages/common/src/config.ts."""
    import pathlib
    common = (pathlib.Path(__file__).resolve().parents[3] / "packages" / "common" / "src" / "config.ts").read_text()
    keys: set[str] = set()
    for name in re.findall(r"\.\.\.(\w+Env)\b", source):
        # `export const kafkaConnectionEnv = {…};` or `export function backendEnv(…) { return {…}; }`
        block = re.search(rf"export const {name} = \{{(.*?)\n\}};", common, re.S) or re.search(
            rf"export function {name}\(.*?\n  return \{{(.*?)\n  \}};\n\}}", common, re.S
        )
        if not block:
            raise SystemExit(f"ci_checks: {name} is spread into a config but not found in packages/common/src/config.ts")
        keys |= set(CONFIG_KEY.findall(block.group(1)))
    return keys


def env(*rendered: str) -> list[str]:
    chart_sets: dict[tuple[str, str], set[str]] = {}
    for path in rendered:
        for doc in documents(path):
            for spec in pod_specs(doc):
                for container in spec.get("initContainers", []) + spec["containers"]:
                    name = container["name"]
                    if name in EVALUATION_CONTAINERS:
                        continue
                    key = (name.removeprefix("migrate-"), "migrate" if name.startswith("migrate-") else "main")
                    chart_sets.setdefault(key, set()).update(e["name"] for e in container.get("env", []))
    problems = []
    for (service, entry), set_by_chart in sorted(chart_sets.items()):
        read = read_variables(service, entry)
        where = f"services/{service}/src/{'config' if entry == 'main' else 'migrate'}.ts"
        for variable in sorted(read - set_by_chart - set(EXTRA_ENV_ONLY) - set(SET_WHEN_ENABLED) - set(IMAGE_VARIABLES)):
            problems.append(f"{where} reads {variable} but the chart never sets it for {service} ({'deployment' if entry == 'main' else 'migration'}): add a value")
        if entry == "main":
            for variable in sorted(set_by_chart - read - RUNTIME_VARIABLES):
                problems.append(f"the chart sets {variable} for {service} but {where} does not read it")
    if not problems:
        print(f"    every variable the services read is set by the chart ({len(chart_sets)} containers), except extraEnv-only: {', '.join(sorted(EXTRA_ENV_ONLY))}")
    return problems


def main() -> int:
    commands = {"kinds": kinds, "security": security, "prometheusrule": prometheusrule,
                "dashboard-rules": dashboard_rules, "runbooks": runbooks, "env": env}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    problems = commands[sys.argv[1]](*sys.argv[2:])
    for problem in problems:
        print(f"ci_checks: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
