"""Assemble the stand-in agent stack layout that the stack image copies into /opt/buzz:

    <out>/bin/{buzz-acp, buzz-agent, buzz-dev-mcp, buzz, relay-forwarder}
    <out>/ca-certificates.crt
    <out>/README.md

Each executable is a Python zipapp (`#!/usr/bin/env python3`) holding only the stdlib-only
stand-in package (as top-level `buzz_standin`) and the forwarder module, so it runs in any task
image that has python3 >= 3.9 and nothing else.

Usage: python -m buzz_operator.dev.stack.build OUT
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import time
import zipapp
from pathlib import Path

PACKAGE = "buzz_standin"
INTERPRETER = "/usr/bin/env python3"
SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
_DEV = Path(__file__).resolve().parents[1]
AGENT_DIR = _DEV / "agent"
FORWARDER = _DEV.parent / "relay" / "forwarder.py"  # the production sidecar, packed in as well

# every staged file's mtime: 1980-01-01 00:00 local time, the first a zip entry can carry (it
# records its file's mtime in local time). With each build's own time the stack image's context,
# and so the image, changed on every `hack/images.sh build` though no source had.
STAGED_MTIME = time.mktime((1980, 1, 1, 0, 0, 0, 0, 0, -1))

# executable name -> (module, function)
ENTRY_POINTS = {
    "buzz-acp": (f"{PACKAGE}.acp", "main"),
    "buzz-agent": (f"{PACKAGE}.about", "agent_main"),
    "buzz-dev-mcp": (f"{PACKAGE}.about", "mcp_main"),
    "buzz": (f"{PACKAGE}.cli", "main"),
    "relay-forwarder": ("relay_forwarder", "main"),
}

README = """# Buzz stand-in agent stack

Copied by the trial pod's `stack` init container into `/opt/buzz`:

- `bin/buzz-acp` - the stand-in agent bridge (policy chosen by `BUZZ_AGENT_MODEL=standin/<policy>`,
  or a model endpoint called as buzz-agent calls it when `BUZZ_AGENT_PROVIDER` is openai/anthropic)
- `bin/buzz-agent`, `bin/buzz-dev-mcp` - layout placeholders that describe themselves
- `bin/buzz` - stand-in CLI (messages, channels, users) speaking to the relay over websockets
- `bin/relay-forwarder` - loopback TCP forwarder (`relay-forwarder LISTEN TARGET`)
- `ca-certificates.crt` - CA bundle for `SSL_CERT_FILE`

Every executable is a Python zipapp run through `/usr/bin/env python3`: the **task image must
provide python3 >= 3.9** (standard library only; no pip packages are needed).
"""


def _stage(root: Path, module: str, function: str) -> None:
    shutil.copytree(AGENT_DIR, root / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(FORWARDER, root / "relay_forwarder.py")
    # Our own __main__: zipapp's generated one drops the function's return value (exit status).
    (root / "__main__.py").write_text(
        f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n", encoding="utf-8")


def build_stack(out: Path, ca_bundle: Path = SYSTEM_CA_BUNDLE) -> dict[str, Path]:
    """Build the layout under `out` (created or refreshed); returns executable name -> path."""
    bin_dir = out / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    built: dict[str, Path] = {}
    for name, (module, function) in ENTRY_POINTS.items():
        with tempfile.TemporaryDirectory(prefix=f"stack-{name}-") as staging:
            root = Path(staging)
            _stage(root, module, function)
            for path in [root, *root.rglob("*")]:
                os.utime(path, (STAGED_MTIME, STAGED_MTIME))
            target = bin_dir / name
            zipapp.create_archive(root, target, interpreter=INTERPRETER, compressed=True)
        target.chmod(0o755 | stat.S_IFREG)
        built[name] = target
    shutil.copyfile(ca_bundle, out / "ca-certificates.crt")
    (out / "README.md").write_text(README, encoding="utf-8")
    return built


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    usage = "usage: python -m buzz_operator.dev.stack.build OUT"
    # checked before OUT: `--help` taken as OUT would build a stack into a directory named --help
    if args[:1] in (["-h"], ["--help"]):
        print(f"{usage}\n\nBuild the stand-in agent stack (bin/buzz-acp, buzz-agent, buzz-dev-mcp, buzz and the CA "
              "bundle) into OUT.")
        return 0
    if len(args) != 1 or args[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    for name, path in build_stack(Path(args[0])).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
