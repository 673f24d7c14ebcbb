// A card as every page draws it: rank over suit, red for hearts and diamonds, a back for a card the
// table holds face down (squeeze) and "?" for one the shoe could not read.
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

// Draws code (a card code, "back", null for unread, undefined for none) into slot; false when empty.
function drawFace(slot, code) {
  slot.replaceChildren();
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
