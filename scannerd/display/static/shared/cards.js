// A card as every page draws it: rank over suit, red for hearts and diamonds, a back for a card the
// table holds face down (squeeze) and "?" for one the shoe could not read.
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

// Draws code (a card code, "back", null for unread, undefined for none) into slot; false when empty.
function drawFace(slot, code) {
  slot.replaceChildren();
  delete slot.dataset.card;
  slot.classList.remove("face", "red", "unread", "back");
  if (code === undefined) return false;
  if (code === null) {
    slot.classList.add("face", "unread");
    slot.textContent = "?";
    return true;
  }
  slot.dataset.card = code;
  if (code === "back") {
    // Squeeze: the card is on the layout face down until the game server reveals it.
    slot.classList.add("face", "back");
    return true;
  }
  const rank = document.createElement("div");
  rank.className = "rank";
  rank.textContent = code[0] === "T" ? "10" : code[0];
  const suit = document.createElement("div");
  suit.className = "suit";
  suit.textContent = SUITS[code[1]] || code[1];
  slot.append(rank, suit);
  slot.classList.add("face");
  if (code[1] === "H" || code[1] === "D") slot.classList.add("red");
  return true;
}

// The layout positions of one side in deal order: three at punto banco, one at Dragon Tiger.
function sidePositions(game, side) {
  return game.positions.filter((pos) => pos.startsWith(side));
}

// A hand's marks into box: the result first (on a narrow hand the marks that do not fit are cut from
// the end, and a natural pair that wins must still say WINS), then the variant's calls, a natural and
// a pair. A tie is nobody's win: both hands say TIE, neither says WINS.
function drawMarks(box, hand, side, winner) {
  const marks = [];
  if (winner === side) marks.push(["win", "WINS"]);
  if (winner === "tie") marks.push(["tie", "TIE"]);
  for (const label of hand.calls || []) marks.push(["call", label]);
  if (hand.natural) marks.push(["natural", "NATURAL"]);
  if (hand.pair) marks.push(["pair", "PAIR"]);
  box.replaceChildren(
    ...marks.map(([kind, label]) => {
      const mark = document.createElement("span");
      mark.className = `mark ${kind}`;
      mark.textContent = label;
      return mark;
    }),
  );
}
