"""Replaying many recordings at once: a directory on every core, or an archive on a cluster.

A recording begins from the state its header saved, so each file replays on
its own and the files can go to different processes; each worker replays a
whole file and hands back the text a sequential ``scannerd replay`` of that
file prints, so the result cannot differ from one. The work goes through
``concurrent.futures.Executor``: a ``ProcessPoolExecutor`` on this machine,
or a Dask cluster's executor (``Client.get_executor()``), whose workers must
see the same paths (a shared filesystem).

The output comes in one defined order, whatever order the workers finish
in: by the table id in each file's header, then by file name. The recorder
names a table's files so that name order is the order they were begun
(``Recorder._new_path``), so each table's files come out in the order they
were recorded. At most ``IN_FLIGHT`` files are out at once, and a result
is let go of once handed on: an archive of a casino's year goes through in
the memory of a few dozen files, not of the year. Within the first of them
the largest go first, so that one long day in a directory does not start
last and leave the other workers idle at the end.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from drivers.base import DriverInitError
from scannerd.recording.format import RecordingError, RecordingReader
from scannerd.recording.replay import DEFAULT_PREFIX, messages
from scannerd.recording.replay_summary import summary_text
from scannerd.recording.source import Recorded, size_of

Emit = Literal["summary", "jsonl"]
T = TypeVar("T")

IN_FLIGHT = 64
"""Files handed to the workers and not yet handed on: enough to keep 64 cores busy."""


@dataclass(frozen=True, slots=True)
class FileReplay:
    """What one file's replay printed (``text``) and said about the file on the side (``notes``)."""

    path: Recorded
    text: str
    notes: tuple[str, ...] = ()
    failed: bool = False


def reader_notes(reader: RecordingReader) -> tuple[str, ...]:
    """What a replay says about a file it could read to the end: a cut-off last line, skipped lines."""
    notes = []
    if reader.truncated:
        notes.append(f"{reader.path} ends in a cut-off line (the recording was interrupted)")
    if reader.skipped:
        notes.append(f"skipped {reader.skipped} lines of kinds this scannerd does not know")
    return tuple(notes)


def replay_file(
    path: Recorded,
    emit: Emit = "jsonl",
    rules: dict[str, Any] | None = None,
    prefix: str = DEFAULT_PREFIX,
    table_id: str | None = None,
) -> FileReplay:
    """One file, replayed whole; a top-level function, so that a worker process can be given it by name."""
    try:
        with RecordingReader(path) as reader:
            stream = messages(reader, rules=rules, prefix=prefix, table_id=table_id)
            if emit == "summary":
                text = summary_text(path, reader.header, stream)
            else:
                text = "".join(message.to_json() + "\n" for message in stream)
            return FileReplay(path, text, reader_notes(reader))
    except (RecordingError, DriverInitError) as exc:
        return FileReplay(path, "", (str(exc),), failed=True)


def _order_key(path: Recorded) -> tuple[str, str]:
    """By table, then name; a file whose header cannot be read comes first (its worker says why)."""
    try:
        with RecordingReader(path) as reader:
            return reader.header.table_id, path.name
    except RecordingError:
        return "", path.name


def replay_many(
    paths: list[Recorded],
    executor: Executor | None = None,
    **options: Any,
) -> Iterator[FileReplay]:
    """Each file's replay, in the defined order, yielded as soon as it and every file before it are done.

    ``options`` are :func:`replay_file`'s. Without an executor the files are
    replayed one after the other in this process: the sequential run that a
    parallel one must equal.
    """
    return each_file(paths, replay_file, _lost_replay, executor, **options)


def _lost_replay(path: Recorded, note: str) -> FileReplay:
    return FileReplay(path, "", (note,), failed=True)


def each_file(
    paths: list[Recorded],
    job: Callable[..., T],
    lost: Callable[[Recorded, str], T],
    executor: Executor | None = None,
    **options: Any,
) -> Iterator[T]:
    """``job(path, **options)`` for every file, in the defined order, as :func:`replay_many` hands them out.

    ``job`` must be a top-level function (a worker process is given it by
    name); ``lost(path, note)`` stands for the result of a file whose worker
    died, so every file named gets its result.
    """
    ordered = sorted(paths, key=_order_key)
    if executor is None:
        for path in ordered:
            yield job(path, **options)
        return
    first = ordered[:IN_FLIGHT]
    futures: dict[Recorded, Future[T]] = {
        p: executor.submit(job, p, **options) for p in sorted(first, key=size_of, reverse=True)
    }
    following = iter(ordered[IN_FLIGHT:])
    try:
        for path in ordered:
            result = _result(path, futures.pop(path), lost)
            after = next(following, None)
            if after is not None:
                futures[after] = executor.submit(job, after, **options)
            yield result
    finally:
        for future in futures.values():
            future.cancel()


def _result(path: Recorded, future: Future[T], lost: Callable[[Recorded, str], T]) -> T:
    """The worker's result; a worker that died (killed, out of memory) or a lost cluster fails that file."""
    try:
        return future.result()
    except Exception as exc:
        return lost(path, f"{path}: not replayed: its worker failed ({type(exc).__name__})")


def executor_for(
    cluster: str | None, workers: int | None, files: int
) -> tuple[Executor | None, Callable[[], None]]:
    """Where the files go, and how to let go of it: a Dask cluster, a pool of processes, or this process.

    ``workers`` defaults to every core; one worker (or one file) means no pool at all.
    """
    if cluster:
        return dask_executor(cluster)
    count = min(workers or default_workers(), files)
    if count == 1:
        return None, lambda: None
    import multiprocessing  # not for a single file's start-up
    from concurrent.futures import ProcessPoolExecutor

    # Workers forked from a clean server, not from this process: a fork of a process with threads
    # (a Dask client, a test's broker) copies locks they held, and the worker can hang on one for good.
    # The server keeps the environment it started with: each worker takes this process's, so it
    # reads an archive with the credentials and endpoint the command was given, not earlier ones.
    context = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(
        max_workers=count, mp_context=context, initializer=_environment, initargs=(dict(os.environ),)
    )
    return pool, lambda: pool.shutdown(cancel_futures=True)


def _environment(environ: dict[str, str]) -> None:
    """A worker's environment: the one the pool was made in."""
    os.environ.clear()
    os.environ.update(environ)


def default_workers() -> int:
    """Every core this process may run on (a service's CPU affinity can be narrower than the machine)."""
    return len(os.sched_getaffinity(0))


class ClusterUnavailable(RuntimeError):
    """No Dask here, or no scheduler at the address; ``str()`` says which, for one line on stderr."""


def dask_executor(address: str) -> tuple[Executor, Callable[[], None]]:
    """An executor on the Dask cluster whose scheduler is at ``address``, and how to let go of it."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterUnavailable(
            "--cluster needs Dask: install scannerd with the 'dask' extra (pip install 'scannerd[dask]')"
        ) from None
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailable(f"no Dask scheduler at {address}: {exc}") from None
    return client.get_executor(), client.close
