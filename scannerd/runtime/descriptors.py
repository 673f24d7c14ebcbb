"""The descriptor budget of a process that serves a web page: the table's daemon and the pit view.

Here rather than beside the pages' server code, so ``scannerd run`` lifts
its limit without loading a web server it may not start.
"""

from __future__ import annotations

import resource

FD_SOFT_LIMIT = 4096
"""Descriptors a process serving a page asks for (the units' ``LimitNOFILE=`` says the same).

Room above what the process itself needs (the shoe, the outbox, the broker
link: a few dozen) and the page's capped connections, so a burst of refused
browser connections never leaves the broker's reconnect without a socket.
The process's own descriptors stay far below 1024 either way, which the MQTT
client and the serial driver need: they wait with ``select()``.
"""


def raise_fd_limit() -> None:
    """Lift the soft descriptor limit (1024 by default for services) to ``FD_SOFT_LIMIT`` if allowed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = FD_SOFT_LIMIT if hard == resource.RLIM_INFINITY else min(FD_SOFT_LIMIT, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
