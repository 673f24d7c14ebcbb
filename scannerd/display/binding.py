"""A listener beside the deal takes its address when it can, and never stops the table when it cannot.

The dealer display, the stream overlay and the metrics all live in the
table's process. A port another program holds, or a host name that does not
resolve yet, must not stop the deal: the listener says why once, tries again
with backoff (back soon after the port frees), and serves once it can.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

RETRY_MIN_S = 1.0
RETRY_MAX_S = 10.0
"""A listener that cannot listen tries again after 1 s, doubling up to this."""


async def bind_retrying(
    bind: Callable[[], socket.socket],
    stop: asyncio.Event,
    page: str,
    listen: str,
    on_failure: Callable[[str], None] = lambda _reason: None,
) -> socket.socket | None:
    """``bind()``'s socket, tried again with backoff while it raises OSError; None if stopped first.

    The first failure is logged once, naming ``page`` and ``listen``; ``on_failure(reason)`` hears
    every one (a health field that says the listener is retrying).
    """
    delay, failures = RETRY_MIN_S, 0
    while not stop.is_set():
        try:
            sock = bind()
        except OSError as exc:
            failures += 1
            reason = exc.strerror or str(exc)
            if failures == 1:
                log.error(f"{page} cannot listen; the table deals on", listen=listen, reason=reason)
            on_failure(reason)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, RETRY_MAX_S)
            continue
        if failures:
            log.info(f"{page} can listen again", listen=listen, failed_attempts=failures)
        return sock
    return None
