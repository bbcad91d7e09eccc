"""`python -m buzz_operator.dev.model`: serve the scripted model endpoint."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from buzz_operator.dev.model.script import POLICIES
from buzz_operator.dev.model.server import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="buzz-scripted-model",
        description=(
            "An OpenAI Chat Completions ({base}/chat/completions) and Anthropic Messages "
            "({base}/v1/messages) endpoint that plays a scripted policy chosen by the request's "
            f"model name (<prefix>/<policy>; policies: {', '.join(sorted(POLICIES))})."
        ),
    )
    parser.add_argument("--host", default=os.environ.get("BUZZ_MODEL_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("BUZZ_MODEL_PORT", "8091")))
    args = parser.parse_args(argv)
    server = serve(args.host, args.port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stdout.write(f'{{"listening": "{args.host}:{server.server_address[1]}"}}\n')
    sys.stdout.flush()
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
