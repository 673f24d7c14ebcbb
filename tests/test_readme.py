"""The README's commands run as a newcomer types them: the demo, the suite, the fuzz run.

A command whose path moved, or whose option went away, fails here rather than
in front of someone on their first day. Each runs from the repository with
this test's own venv standing in for the README's ``.venv``, the venv set-up
before it checked rather than run (it would fetch every package); the suite
is collected, not run, and the demo runs for a few seconds.
"""

from __future__ import annotations

import glob
import itertools
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from hypothesis import settings

from tests.support.docs import code_lines

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
VENV_BIN = ".venv/bin/"


def command(marker: str) -> tuple[list[str], list[list[str]]]:
    """The one README command whose line holds ``marker``: its words as a shell splits them (this
    test's venv for ``.venv``, globs expanded), and the commands ``&&`` runs before it."""
    found = [line for line in code_lines(README) if marker in line]
    assert len(found) == 1, f"README commands with {marker!r}: {found}"
    *before, last = (shlex.split(part, comments=True) for part in found[0].split("&&"))
    return [word for token in last for word in _as_shell_gives(token)], before


def _as_shell_gives(token: str) -> list[str]:
    if token.startswith(VENV_BIN):
        return [str(Path(sys.executable).parent / token.removeprefix(VENV_BIN))]
    if "*" in token:  # as bash expands it: the token itself where nothing matches
        return sorted(glob.glob(token, root_dir=ROOT)) or [token]
    return [token]


def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def assert_installs_what_is_there(setup: list[list[str]]) -> None:
    """The venv's set-up names a constraints file that is there and extras the package has."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    pip = [words for words in setup if words[0].endswith("pip")]
    assert pip, setup
    for words in pip:
        for flag, value in itertools.pairwise(words):
            if flag == "-c":
                assert (ROOT / value).is_file(), value
            if flag == "-e" and "[" in value:
                assert set(value.split("[", 1)[1].rstrip("]").split(",")) <= extras, value


def test_the_demo_command_deals_a_hand() -> None:
    argv, setup = command("scannerd demo")
    assert_installs_what_is_there(setup)
    # Its own options end it: a short run, a line per event, any free port (8080 may be taken).
    done = run([*argv, "--seconds", "8", "--no-view", "--listen", "127.0.0.1:0"], timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r" card player1 \S+ round=S1-R1$", done.stdout, re.MULTILINE), done.stdout


def test_the_test_command_collects_the_suite() -> None:
    argv, setup = command("pytest -q -n 2")
    assert_installs_what_is_there(setup)
    done = run([*argv, "--collect-only", "-p", "no:cacheprovider"], timeout=300)  # not the suite run again
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^\d+ tests collected", done.stdout, re.MULTILINE), done.stdout[-3000:]


def test_the_fuzz_command_runs_the_inputs_it_says() -> None:
    argv, _ = command("--hypothesis-profile=fuzz")
    done = run([*argv, "--collect-only", "-q", "-p", "no:cacheprovider"], timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    collected = re.search(r"^(\d+) tests? collected", done.stdout, re.MULTILINE)
    assert collected, done.stdout
    said = re.search(r"([\d,]+)-input", next(line for line in code_lines(README) if "fuzz" in line))
    assert said, "the README says how many inputs the fuzz run tries"
    inputs = int(collected[1]) * settings.get_profile("fuzz").max_examples
    assert inputs == int(said[1].replace(",", ""))
