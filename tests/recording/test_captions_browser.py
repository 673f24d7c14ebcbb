"""The captions play in a real browser's ``<video>``: Chromium parses both tracks and shows their cues."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import webvtt

from scannerd.cli import main
from tests.support.browser import wait_for

SESSION = Path(__file__).resolve().parent.parent / "sessions" / "staff-and-suspension.jsonl"

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>review</title></head><body>
<video id="v" muted playsinline width="320" height="240">
  <track id="cues" kind="captions" srclang="en" label="Table" src="review.vtt" default>
  <track id="chapters" kind="chapters" srclang="en" label="Hands" src="review.chapters.vtt">
</video>
<script>
const video = document.getElementById("v");
// A tiny silent video made here: a canvas recorded for a moment, as WebM.
const canvas = Object.assign(document.createElement("canvas"), {width: 16, height: 16});
const paint = canvas.getContext("2d");
const recorder = new MediaRecorder(canvas.captureStream(10), {mimeType: "video/webm"});
const parts = [];
recorder.ondataavailable = (e) => parts.push(e.data);
recorder.onstop = () => {
  video.src = URL.createObjectURL(new Blob(parts, {type: "video/webm"}));
  video.dataset.made = "yes";
};
let frame = 0;
const tick = setInterval(() => {
  paint.fillStyle = frame++ % 2 ? "#000" : "#fff";
  paint.fillRect(0, 0, 16, 16);
}, 50);
recorder.start();
setTimeout(() => { clearInterval(tick); recorder.stop(); }, 300);
for (const t of video.textTracks) t.mode = t.kind === "chapters" ? "hidden" : "showing";
</script></body></html>
"""

READ_TRACK = """
const track = document.getElementById(arguments[0]);
if (track.readyState !== 2) return null;
return Array.from(track.track.cues, (c) => [c.startTime, c.endTime, c.text]);
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_the_tracks_load_in_a_video_and_their_cues_read_back(
    browser: Any, served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["captions", str(SESSION), "--from", "2024-05-01T12:00:00Z", "--to", "2024-05-01T12:01:00Z"]
    assert main([*argv, "--offset", "0.25", "--out", str(tmp_path / "review.vtt")]) == 0
    capsys.readouterr()
    (tmp_path / "index.html").write_text(PAGE)
    written = webvtt.read(str(tmp_path / "review.vtt"))
    chapters = webvtt.read(str(tmp_path / "review.chapters.vtt"))

    browser.get(served + "index.html")
    cues = wait_for(browser, lambda d: d.execute_script(READ_TRACK, "cues"), 10, "the captions track to load")
    shown = wait_for(browser, lambda d: d.execute_script(READ_TRACK, "chapters"), 10, "the chapters to load")
    wait_for(browser, lambda d: d.execute_script("return video.readyState >= 1"), 10, "the video to load")

    assert len(cues) == len(written) > 10
    for (start, end, text), cue in zip(cues, written, strict=True):
        assert round(start * 1000) == cue.start_time.in_milliseconds()
        assert round(end * 1000) == cue.end_time.in_milliseconds()
        assert text == cue.text
    assert round(cues[0][0], 3) == 1.75  # new shoe at 12:00:01.5, shifted by --offset
    assert cues[-1][2] == "hand 2 VOID (OPERATOR_VOID) - dispute at the table by pit via pit"
    assert (
        [text for *_, text in shown]
        == [c.text for c in chapters]
        == ["shoe S1", "shoe S1, hand 1", "shoe S1, hand 2"]
    )
    assert browser.execute_script("return video.textTracks[0].mode") == "showing"
