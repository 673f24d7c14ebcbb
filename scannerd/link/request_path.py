"""Game-server requests on their way in and their answers on their way out, both bounded.

paho's network thread reads requests and writes events. It used to run each
request itself (under the daemon's lock, with the table's state to encode):
under a flood it was busy running requests instead of writing, and the
answers queued in paho ahead of the next card, which then waited seconds
behind them (``tests/system/test_fault_request_flood.py``; its figures, before and
after, are in docs/reliability.md). Now the network thread only parses a request and queues it
here, and one worker thread runs the queue in order and sends the answers,
at most ``WINDOW`` unacknowledged at a time: well inside the room paho keeps
above the events' window (``Publisher``), so an event never waits behind
answers. When ``QUEUE`` requests already wait, a request is not run: it is
answered ``busy`` at once, at QoS 0 (nothing waits for its acknowledgement,
so nothing grows), and the game server asks again later.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

import paho.mqtt.client as mqtt
import structlog

from scannerd.contract.requests import Request, RequestError, Response, parse_request

log = structlog.get_logger(__name__)

QUEUE = 64
"""Requests (and answers to bad ones) waiting their turn; a game server that waits for each answer
needs one, a few game-server processes a handful."""
WINDOW = 16
"""Answers sent and not yet acknowledged by the broker."""
_ROOM_POLL_S = 0.5

RETAINED = "retained requests are ignored: publish without the retain flag"

Handler = Callable[[Request], Response | None]
"""Runs one request at a time on the path's thread (the daemon's judgement under its lock): the
Response to answer, or None and ``RequestPath.answer`` later."""


class AnswerLink(Protocol):
    """What the path needs of the link to the broker (``Publisher``): it hands requests in, sends answers."""

    @property
    def connection(self) -> int:
        """The current broker connection's number: answers sent on an older one are never acknowledged."""
        ...

    def take_requests(self, offer: Callable[[str, str | None, bytes, bool], None]) -> None: ...
    def send_answer(self, response: Response) -> mqtt.MQTTMessageInfo: ...
    def send_answer_now(self, response: Response) -> object: ...
    def count(self, name: str, n: int = 1) -> None: ...


class RequestPath:
    """Between paho's network thread (``offer``) and the broker (``send``), through one worker.

    ``run`` is the daemon's handler; ``send`` publishes an answer at QoS 1 and
    returns paho's message info, ``send_at_once`` publishes one at QoS 0;
    ``connection`` is the number of the current broker connection (answers
    sent on an older one will never be acknowledged); ``count`` bumps a
    health counter.
    """

    def __init__(
        self,
        run: Callable[[Request], Response | None] | None,
        send: Callable[[Response], mqtt.MQTTMessageInfo],
        send_at_once: Callable[[Response], object],
        connection: Callable[[], int],
        count: Callable[[str], None],
    ) -> None:
        self._run_request = run
        self._send = send
        self._send_at_once = send_at_once
        self._connection = connection
        self._count = count
        self._cond = threading.Condition()
        self._items: deque[Request | Response] = deque()  # in arrival order; guarded by _cond
        self._busy = 0  # requests answered busy since the queue last ran empty
        self._sent: deque[tuple[int, mqtt.MQTTMessageInfo]] = deque()  # worker thread only
        self._stopping = False
        self._thread: threading.Thread | None = None

    @classmethod
    def over(cls, link: AnswerLink, run: Handler | None) -> RequestPath:
        """The path of the requests ``link`` receives, run by ``run``, their answers sent back by it."""
        path = cls(run, link.send_answer, link.send_answer_now, lambda: link.connection, link.count)
        link.take_requests(path.offer)
        return path

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="mqtt-requests", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ paho's network thread

    def offer(self, command: str, pit_user: str | None, payload: bytes, retain: bool) -> None:
        """Take one request message (from ``pit_user``'s topic, or the game server's); never blocks,
        never runs it."""
        item: Request | Response
        try:
            item = replace(parse_request(command, payload), pit_user=pit_user)
            if retain:  # a retained request would run again at every reconnect
                raise RequestError(command, RETAINED, item.transaction)
        except RequestError as exc:
            item = exc.response()
        with self._cond:
            if len(self._items) < QUEUE:
                if isinstance(item, Response):  # in an overload only the count says it (below)
                    log.warning("request rejected", command=command, error=item.error)
                self._items.append(item)
                self._cond.notify()
                return
            if self._busy == 0:
                log.warning("too many requests waiting: answering busy", waiting=len(self._items))
            self._busy += 1
        if isinstance(item, Request):
            text = f"the table is busy: {QUEUE} requests are waiting; ask again later"
            item = Response(command=command, status="busy", transaction=item.transaction, error=text)
            self._count("busy_requests")
        else:
            self._count("rejected_requests")
        self._send_at_once(item)

    def answer(self, response: Response) -> None:
        """Queue an answer to go out in turn (any thread)."""
        with self._cond:
            self._items.append(response)
            self._cond.notify()

    # ------------------------------------------------------------------ the worker

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._items or self._stopping)
                if self._stopping:
                    return
                item = self._items.popleft()
                if not self._items and self._busy:
                    log.info("requests back to normal", answered_busy=self._busy)
                    self._busy = 0
            try:
                answer = self._execute(item) if isinstance(item, Request) else item
                if answer is not None:
                    self._wait_for_room()
                    if answer.status == "error":
                        self._count("rejected_requests")
                    self._sent.append((self._connection(), self._send(answer)))
            except Exception:  # the worker must outlive a bad moment; the game server asks again
                self._count("errors")
                log.exception("request path error")

    def _execute(self, request: Request) -> Response | None:
        if self._run_request is None:
            return Response(
                command=request.command, status="error", transaction=request.transaction, error="no handler"
            )
        try:
            answer = self._run_request(request)
        except Exception as exc:
            log.exception("request handler failed", command=request.command)
            answer = Response(
                command=request.command,
                status="error",
                transaction=request.transaction,
                error=f"internal error: {exc}",
            )
        if answer is not None and answer.status == "error":
            log.warning("request rejected", command=request.command, error=answer.error)
        return answer

    def _wait_for_room(self) -> None:
        """Until fewer than WINDOW answers are unacknowledged on the current connection."""
        while True:
            live = self._connection()
            self._sent = deque(s for s in self._sent if not _done(*s, live))
            if len(self._sent) < WINDOW or self._stopping:
                return
            _, oldest = self._sent[0]
            with contextlib.suppress(RuntimeError, ValueError):  # not sent after all: _done says so next
                oldest.wait_for_publish(_ROOM_POLL_S)


def _done(connection: int, info: mqtt.MQTTMessageInfo, live: int) -> bool:
    """Acknowledged, never sent, or sent on a connection that is gone (paho drops those at reconnect)."""
    return (
        connection != live
        or info.is_published()
        or info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_AGAIN)
    )
