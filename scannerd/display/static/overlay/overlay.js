// Stream overlay: draws the view the daemon streams (/events) over the table's video. It holds nothing
// a player must not see: the server sends it only the round, the roads and the betting time.
"use strict";

// State the tests and the studio's engineer can inspect from the console.
const overlay = (window.scannerdOverlay = { view: null, views: 0 });

const $ = (id) => document.getElementById(id);
const betting = bettingClock(true);

function render(view) {
  overlay.view = view;
  overlay.views += 1;
  document.body.dataset.game = view.game.name;
  $("table-id").textContent = view.table_id;
  const round = view.round;
  $("hand-no").textContent = round ? `HAND ${round.hand_no}` : "";
  $("last-hand").hidden = !(round && round.last_hand);
  renderRound(round, view.game);
  renderStatus();
  drawHistory(view.history, view.game);
}

function renderRound(round, game) {
  $("round").hidden = !round;
  if (!round) return;
  const winner = round.winner;
  game.sides.forEach((side, n) => {
    const box = $(`side${n}`);
    box.dataset.side = side;
    box.dataset.winner = String(winner === side);
    $(`side${n}-name`).textContent = side.toUpperCase();
    const hand = round[side];
    const known = hand.cards.length > 0 && hand.total !== null; // none while a card is held face down
    $(`side${n}-total`).textContent = known ? String(hand.total) : "";
    drawMarks($(`side${n}-marks`), hand, side, winner);
    const positions = sidePositions(game, side);
    box.querySelectorAll(".card").forEach((slot, i) => {
      const pos = positions[i];
      slot.hidden = pos === undefined;
      slot.dataset.pos = pos || "";
      const card = hand.cards[i];
      drawFace(slot, card);
      // A third card's place shows only while it may still come.
      slot.dataset.needed = String(card !== undefined || (round.phase === "dealing" && i < 2));
    });
  });
}

// What the space between the sides says: the betting time, NO MORE BETS, or the result.
function renderStatus() {
  const view = overlay.view;
  if (!view) return;
  const round = view.round;
  const clock = betting(round, Date.now() / 1000);
  let state = "";
  let label = "";
  let value = "";
  if (round && clock.noMoreBets) [state, label] = ["stop", "NO MORE BETS"];
  else if (round && round.phase === "betting") {
    [state, label] = ["bets", "PLACE YOUR BETS"];
    if (clock.left !== null) value = String(clock.left);
  } else if (round && round.winner) {
    state = "result";
    label = round.winner === "tie" ? "TIE" : `${round.winner.toUpperCase()} WINS`;
  } else if (round && round.phase === "void") [state, label] = ["void", "HAND VOID"];
  const box = $("status");
  box.dataset.state = state;
  box.style.setProperty("--winner", round && round.winner ? `var(--overlay-${round.winner})` : "");
  $("status-label").textContent = label;
  $("status-value").textContent = value;
}


setInterval(renderStatus, 200);
window.addEventListener("resize", () => overlay.view && drawHistory(overlay.view.history, overlay.view.game));
followStream("overlay", render);
