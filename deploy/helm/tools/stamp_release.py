#!/usr/bin/env python3
"""Stamps a copy of the chart with the images one release published, before `helm package`
(.github/workflows/release.yml): `image.registry` and each service's `image.digest` in values.yaml,
`version` and `appVersion` in Chart.yaml. The chart in git has no default registry; the packaged
one pulls exactly the images its release pushed, by digest. Comments are kept (line edits), and the
result is parsed back and compared with what was asked.

    stamp_release.py CHART_COPY_DIR VERSION REGISTRY DIGESTS.json

DIGESTS.json: {"gateway": "sha256:…", "web": "sha256:…", …}, every service of the chart.
Needs PyYAML.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

SERVICES = ("gateway", "web", "tasks", "attachments", "webhooks")
DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$")
REGISTRY = re.compile(r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$")


def stamp_values(text: str, registry: str, digests: dict[str, str]) -> str:
    """Sets `registry:` under the top-level `image:` and `digest:` under `<service>:` → `image:`."""
    out: list[str] = []
    top = ""  # current top-level key
    in_image = False  # inside `<top>.image` (top-level `image:` or a service's `  image:`)
    for line in text.splitlines(keepends=True):
        if re.match(r"^[A-Za-z]", line):
            top = line.split(":", 1)[0]
            in_image = top == "image"
        elif top in SERVICES and re.match(r"^  [A-Za-z]", line):
            in_image = line.startswith("  image:")
        if top == "image" and in_image and re.match(r"^  registry: ", line):
            line = f"  registry: {json.dumps(registry)}\n"
        elif top in SERVICES and in_image and re.match(r"^    digest: ", line):
            line = f"    digest: {json.dumps(digests[top])}\n"
        out.append(line)
    return "".join(out)


def stamp_chart(text: str, version: str) -> str:
    text = re.sub(r"(?m)^version: .*$", f"version: {version}", text)
    return re.sub(r"(?m)^appVersion: .*$", f"appVersion: {json.dumps(version)}", text)


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    chart, version, registry, digests_file = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    digests = json.loads(Path(digests_file).read_text())
    problems = []
    if not VERSION.match(version):
        problems.append(f"version {version!r} is not semver (x.y.z[-pre])")
    if not REGISTRY.match(registry):
        problems.append(f"registry {registry!r} is not host[:port][/path] in lower case")
    for service in SERVICES:
        if not DIGEST.match(str(digests.get(service, ""))):
            problems.append(f"{digests_file}: no sha256 digest for {service}")
    if problems:
        for problem in problems:
            print(f"stamp_release: {problem}", file=sys.stderr)
        return 1

    values_file, chart_file = chart / "values.yaml", chart / "Chart.yaml"
    values_file.write_text(stamp_values(values_file.read_text(), registry, digests))
    chart_file.write_text(stamp_chart(chart_file.read_text(), version))

    values = yaml.safe_load(values_file.read_text())
    meta = yaml.safe_load(chart_file.read_text())
    got = {"registry": values["image"]["registry"], "version": str(meta["version"]), "appVersion": str(meta["appVersion"])}
    got.update({service: values[service]["image"]["digest"] for service in SERVICES})
    wanted = {"registry": registry, "version": version, "appVersion": version, **{s: digests[s] for s in SERVICES}}
    if got != wanted:
        print(f"stamp_release: the stamped chart reads {got}, expected {wanted}", file=sys.stderr)
        return 1
    print(f"stamp_release: {chart} is {version}, images from {registry} by digest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
