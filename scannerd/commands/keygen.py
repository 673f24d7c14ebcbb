"""``scannerd keygen FILE``: a key pair for signing a table's recordings (docs/operations.md).

The private key goes where the operator says (the credential store, say), made
readable by its owner only and never over an existing file: a key overwritten
by a slip would leave every recording it signed unverifiable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scannerd.recording.signing import fingerprint, write_key_pair

EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "private", type=Path, metavar="FILE", help="where the private key goes (PEM, mode 0600)"
    )
    parser.add_argument(
        "--public",
        type=Path,
        metavar="FILE",
        help="where the public key goes, for whoever verifies (default: FILE.pub)",
    )


def run(args: argparse.Namespace) -> int:
    public = args.public or args.private.with_name(args.private.name + ".pub")
    try:
        key = write_key_pair(args.private, public)
    except OSError as exc:
        print(f"scannerd keygen: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"private key {args.private}\npublic key  {public}\nfingerprint {fingerprint(key)}")
    return 0
