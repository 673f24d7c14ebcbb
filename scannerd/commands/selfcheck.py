"""``scannerd selfcheck``: is what is installed what the wheel shipped? One line, and exit 1 if not."""

from __future__ import annotations

import argparse
import sys

from scannerd.runtime.software import NotFromAWheel, check


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # nothing to choose: it checks the scannerd that runs it


def run(args: argparse.Namespace) -> int:
    del args
    try:
        installed = check()
    except NotFromAWheel as exc:
        print(f"selfcheck: {exc}", file=sys.stderr)
        return 2
    for path in installed.differing:
        print(f"selfcheck: {path} differs from what the wheel recorded", file=sys.stderr)
    for path in installed.missing:
        print(f"selfcheck: {path} is missing", file=sys.stderr)
    state = "intact" if installed.intact else "NOT intact"
    print(
        f"scannerd {installed.version}: {installed.checked} files {state}; "
        f"installed set sha256:{installed.digest}"
    )
    return 0 if installed.intact else 1
