// The live stream the dealer display and the pit view both follow. The server sends its whole view as
// one named event on every change and a ping between changes, so a page only ever draws the last one.
"use strict";

const SILENCE_MS = 12000; // no view or ping for this long: the link is dead even if the socket says not
const RETRY_MS = 1000;

// Calls onView with each view named eventName; body[data-conn] says whether the stream is live.
function followStream(eventName, onView) {
  let source = null;
  let lastHeard = 0;
  let version = null; // the server's, from its first view

  const heard = () => {
    lastHeard = Date.now();
    setConn("live");
  };

  function connect() {
    if (source) source.close();
    source = new EventSource("/events");
    source.addEventListener(eventName, (e) => {
      heard();
      const view = JSON.parse(e.data);
      // A server upgraded under a page left open for months: load the new page rather than draw
      // with the old one.
      if (version !== null && view.server_version !== version) {
        location.reload();
        return;
      }
      version = view.server_version;
      onView(view);
    });
    source.addEventListener("ping", heard);
    source.onerror = () => {
      setConn("disconnected");
      // The browser retries by itself unless the answer was not a stream; then we start over.
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, RETRY_MS);
    };
  }

  setInterval(() => {
    if (document.body.dataset.conn === "live" && Date.now() - lastHeard > SILENCE_MS) {
      setConn("disconnected");
      connect();
    }
  }, 1000);
  connect();
}

function setConn(state) {
  document.body.dataset.conn = state;
}
