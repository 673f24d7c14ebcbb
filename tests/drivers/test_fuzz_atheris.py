"""Coverage-guided fuzzing with atheris (libFuzzer): every codec and the request parser.

Hypothesis (tests/drivers/test_fuzz_codecs.py, tests/contract/test_fuzz_requests.py) generates
inputs from a description of them; atheris mutates bytes towards code not yet
covered, so the two find different things. The first bytes of each input
choose the target and how the rest is cut into reads; any exception that
escapes is a crash. Skipped where atheris is not installed (it is not part of
the ``test`` extra: ``pip install atheris``).

The test runs this file as the fuzzer, in its own process (libFuzzer owns
the process and exits it):

    python tests/drivers/test_fuzz_atheris.py -atheris_runs=1000000
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

RUNS = 100_000
TARGETS = ("beetek", "linecode", "framed", "usb-hid", "request")


@pytest.mark.timeout(600)
def test_atheris_finds_no_input_that_raises(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    proc = subprocess.run(
        [sys.executable, __file__, f"-atheris_runs={RUNS}", "-max_len=4096"],
        cwd=tmp_path,  # where libFuzzer would leave a crashing input
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"Done {RUNS} in" in proc.stderr


def main() -> None:
    import atheris

    with atheris.instrument_imports():
        from drivers.codecs.beetek import BeetekCodec
        from drivers.codecs.framed import FramedCodec
        from drivers.codecs.hid import HidScannerCodec
        from drivers.codecs.linecode import LinecodeCodec
        from drivers.events import DeviceEvent
        from scannerd.contract.command_catalogue import COMMANDS
        from scannerd.contract.requests import RequestError, parse_request

    codecs = (BeetekCodec, LinecodeCodec, FramedCodec, HidScannerCodec)
    commands = [*COMMANDS, "unknown"]

    def one_input(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        target = fdp.ConsumeIntInRange(0, len(TARGETS) - 1)
        if TARGETS[target] == "request":
            command = commands[fdp.ConsumeIntInRange(0, len(commands) - 1)]
            with contextlib.suppress(RequestError):  # a clear refusal is the right answer
                parse_request(command, fdp.ConsumeBytes(fdp.remaining_bytes()))
            return
        read_size = fdp.ConsumeIntInRange(1, 64)
        stream = fdp.ConsumeBytes(fdp.remaining_bytes())
        codec = codecs[target]()
        for start in range(0, len(stream), read_size):
            for event in codec.feed(stream[start : start + read_size]):
                assert isinstance(event, DeviceEvent)

    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
