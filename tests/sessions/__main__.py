"""Build the hand-written recordings, rebuild the golden files, or check them (see __init__)."""

from __future__ import annotations

import argparse
import sys

from tests.sessions import DIR, diff, golden_path, recordings, render
from tests.sessions.cases import CASES


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sessions", description=__doc__)
    parser.add_argument("action", choices=["build", "rebuild", "check"])
    parser.add_argument("names", nargs="*", help="only these sessions (default: all)")
    args = parser.parse_args()
    if args.action == "build":
        for name, make in CASES.items():
            if not args.names or name in args.names:
                session = make()
                session.write(DIR / f"{name}{session.suffix}")
                print(f"wrote {name}{session.suffix}")
        return 0
    failed = 0
    for path in recordings():
        golden = golden_path(path)
        if args.names and golden.stem not in args.names:
            continue
        if args.action == "rebuild":
            golden.write_text(render(path))
            print(f"wrote {golden.name}")
        elif difference := diff(path):
            failed += 1
            sys.stdout.write(difference)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
