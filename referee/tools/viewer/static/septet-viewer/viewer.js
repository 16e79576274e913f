/*
 * Septet replay viewer: plays a `septet-replay/1` document card by card, in plain JavaScript.
 *
 * Use it in a page with viewer.css and this file, then either
 *   <div class="septet-viewer" data-replay-url="/matches/42/replay.json"></div>   (mounted on load)
 * or SeptetViewer.mount(element, replayDocument, options).
 *
 * Everything taken from the replay reaches the page as text (textContent, attribute values),
 * never as HTML. A document that does not hold together (unknown format, a card played that its
 * seat does not hold, a trick that differs from its plays...) shows an error inside the element.
 *
 * A "step" is one shown event: every event of the document except the inputs (`chance`,
 * `action`). Step 0 is the table before the first event; step k is the table after the k-th
 * shown event. The URL hash `#step=37&seat=2` (or `seat=all`) names a moment and a perspective.
 */
(function (global) {
  "use strict";

  var FORMAT = "septet-replay/1";
  // One step every 350 ms at 1x (a closed trick stays twice that): the longest round of any game,
  // Oh Hell! or 7Up7Down at seven seats (about 73 steps), plays in under 30 s; at 900 ms an Oh
  // Hell! match took 13 minutes. The Speed list and + / - go from 0.25x to 8x.
  var STEP_MS = 350;
  var HASH_DELAY_MS = 150;
  var SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
  var INPUT_EVENTS = { chance: true, action: true };
  var GAME_NAMES = {
    "oh7": "Oh 7?",
    "oh7-advanced": "Oh 7? (advanced)",
    "oh7-duel": "Oh 7? for two, with the Dummy",
    "oh-hell": "Oh Hell!",
    "black-sevens": "Black Sevens",
    "seven-up-seven-down": "7Up7Down"
  };
  var FAMILY = {
    "oh7": "oh7", "oh7-advanced": "oh7", "oh7-duel": "oh7",
    "oh-hell": "bidding", "seven-up-seven-down": "bidding", "black-sevens": "black-sevens"
  };
  var DUMMY_SEAT = 2;
  var PLAY_LABEL = "\u25B6 Play";
  var PAUSE_LABEL = "\u275A\u275A Pause";
  var CLOCK_TICK_MS = 100;

  // Cards ------------------------------------------------------------------------------------

  var SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663", F: "\u273F" };
  var SUIT_NAME = { S: "Spades", H: "Hearts", D: "Diamonds", C: "Clubs", F: "Flowers" };
  var RANK_LABEL = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };
  var RANK_NAME = { T: "10", J: "Jack", Q: "Queen", K: "King", A: "Ace" };
  var CARD_52 = /^[2-9TJQKA][SHDC]$/;
  var CARD_OH7 = /^[0-7][SHCDF]$/;
  var SPECIAL_OH7 = /^([1-4]\*|N|\?)$/;
  var BLACK_SEVENS_VALUE = { T: 10, J: 11, Q: 12, K: 13, A: 14 };

  /** What a card code looks like: its corner label, suit symbol, CSS kind and spoken name. */
  function cardFace(code) {
    if (code.length === 2 && code[1] === "*") {
      return { rank: code[0], pip: "\u2605", kind: "star", title: "Star " + code[0] };
    }
    if (code === "N") return { rank: "\u00D8", pip: "", kind: "naught", title: "Naught (0)" };
    if (code === "?") return { rank: "\u203D", pip: "", kind: "interrobang", title: "Interrobang" };
    var rank = code[0];
    var suit = code[1];
    return {
      rank: RANK_LABEL[rank] || rank,
      pip: SUIT_SYMBOL[suit] || suit,
      kind: "suit-" + suit,
      title: (RANK_NAME[rank] || rank) + " of " + (SUIT_NAME[suit] || suit)
    };
  }

  function cardLabel(code) {
    var face = cardFace(code);
    return face.rank + face.pip;
  }

  /** Black Sevens' card values (RULES.md §3): 7S is 25, 7C is 21, aces 14. */
  function blackSevensValue(code) {
    if (code === "7S") return 25;
    if (code === "7C") return 21;
    return BLACK_SEVENS_VALUE[code[0]] || parseInt(code[0], 10);
  }

  function beats(cards, standing) {
    var mine = cards.map(blackSevensValue).sort(function (a, b) { return a - b; });
    var theirs = standing.map(blackSevensValue).sort(function (a, b) { return a - b; });
    for (var i = 0; i < mine.length; i++) if (mine[i] < theirs[i]) return false;
    return true;
  }

  // Reading the document into a timeline -----------------------------------------------------

  function ReplayError(message) {
    this.name = "ReplayError";
    this.message = message;
  }
  ReplayError.prototype = Object.create(Error.prototype);

  function fail(message) {
    throw new ReplayError(message);
  }

  function isInt(value) {
    return typeof value === "number" && Math.floor(value) === value && isFinite(value);
  }

  function numbers(value, length, what) {
    if (!Array.isArray(value) || value.length !== length || !value.every(isInt)) {
      fail(what + " must be " + length + " whole numbers");
    }
    return value.slice();
  }

  function clone(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function removeOne(list, card) {
    var i = list.indexOf(card);
    if (i < 0) return false;
    list.splice(i, 1);
    return true;
  }

  /** The table's seats as the document says: `view` is "public", a seat number, or null (every hand). */
  function readView(value, players) {
    if (value === "public") return "public";
    if (isInt(value) && value >= 0 && value < players) return value;
    return null;
  }

  /**
   * Reads a replay document's header and returns {model, feed}: `feed(event)` adds one event to
   * the model ({game, names, players, seats, view, steps, rounds, summaries, ...}), one snapshot of
   * the table per step, so seeking anywhere is immediate and a live match grows event by event
   * without reading again what came before. Throws ReplayError naming the first event that does
   * not hold together.
   *
   * A document filtered for an audience (docs/live.md) holds `null` for a hand it may not see,
   * with `hand_sizes`, and `discard_size` / `pile_size` for cards nobody there may see: the
   * table then counts those cards (`unknown`, `discardHidden`, `pileHidden`) and the checks
   * check what is known.
   */
  function createReader(doc, live) {
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) fail("a replay is a JSON object");
    if (doc.format !== FORMAT) fail("unsupported replay format (this viewer reads " + FORMAT + ")");
    var game = doc.game;
    if (!Object.prototype.hasOwnProperty.call(FAMILY, game)) fail("unknown game id " + JSON.stringify(game));
    var family = FAMILY[game];
    if (!Array.isArray(doc.seats) || doc.seats.length < 2 || doc.seats.length > 7) {
      fail("the replay's seats must be a list of 2 to 7 players");
    }
    if (!Array.isArray(doc.events) && !(live && doc.events === undefined)) fail("the replay's events must be a list");
    var names = doc.seats.map(function (seat, i) {
      if (seat === null || typeof seat !== "object") fail("seat " + i + " is not an object");
      return seat.name === undefined || seat.name === null ? "seat " + i : String(seat.name);
    });
    var players = names.length;
    var duel = game === "oh7-duel";
    if (duel && players !== 2) fail("oh7-duel is played by 2 players");
    var seats = duel ? players + 1 : players;
    var allNames = duel ? names.concat(["Dummy"]) : names;

    function validCard(code) {
      if (typeof code !== "string") return false;
      if (family !== "oh7") return CARD_52.test(code);
      return CARD_OH7.test(code) || (game === "oh7-advanced" && SPECIAL_OH7.test(code));
    }
    function cards(value, what) {
      if (!Array.isArray(value) || !value.every(validCard)) fail(what + " must be a list of card codes");
      return value.slice();
    }
    function seatOf(event, where, limit) {
      if (!isInt(event.seat) || event.seat < 0 || event.seat >= (limit || seats)) {
        fail(where + ": bad seat " + JSON.stringify(event.seat));
      }
      return event.seat;
    }
    function count(value, what) {
      if (!isInt(value) || value < 0) fail(what + " must be a whole number");
      return value;
    }

    var state = {
      round: null, dealer: null, trumpCard: null, trump: undefined, handSize: null,
      hands: [], unknown: [], known: [], discard: [], discardHidden: 0, pile: [], pileHidden: 0,
      dummyUp: [], lastCards: null,
      bids: [], attempts: [], finalBets: null, firstLeader: null, revealer: null,
      trick: [], trickWinner: null, standing: null, tricksWon: [], tricksDone: 0,
      scores: new Array(players).fill(0), forfeits: {}, over: null, caption: "The game is about to start."
    };
    var steps = [];
    var rounds = [];
    var summaries = [];
    var lastAction = null;
    var result = doc.result && typeof doc.result === "object" ? doc.result : {};
    var model = {
      game: game, family: family, names: names, allNames: allNames, players: players, seats: seats,
      duel: duel, view: readView(doc.view, players), steps: steps, rounds: rounds, summaries: summaries,
      events: 0, reason: typeof result.reason === "string" ? result.reason : "",
      forfeits: Array.isArray(doc.forfeits) ? doc.forfeits : []
    };

    function snapshot(eventIndex) {
      var shot = clone(state);
      shot.eventIndex = eventIndex;
      shot.summaries = summaries.length;
      shot.roundSlot = rounds.length - 1;
      shot.trickSlot = rounds.length ? rounds[rounds.length - 1].tricks.length - 1 : -1;
      steps.push(shot);
    }
    function resetRound() {
      state.hands = []; state.unknown = []; state.known = [];
      state.discard = []; state.discardHidden = 0; state.pile = []; state.pileHidden = 0; state.dummyUp = [];
      state.lastCards = null;
      state.bids = new Array(players).fill(null); state.attempts = []; state.finalBets = null;
      state.firstLeader = null; state.revealer = null; state.trick = []; state.trickWinner = null;
      state.standing = null; state.tricksWon = new Array(seats).fill(0); state.tricksDone = 0;
      state.trump = undefined; state.trumpCard = null;
      for (var s = 0; s < seats; s++) { state.known.push([]); state.unknown.push(0); }
    }
    function timing(action) {
      if (!action) return "";
      if (action.forced) return " (forced)";
      if (action.fallback) return " (fallback policy)";
      if (isInt(action.us)) return " (" + (action.us / 1000).toFixed(1) + " ms)";
      return "";
    }
    function beginTrickIfNeeded() {
      if (state.trickWinner !== null) {
        state.trick = []; state.trickWinner = null; state.standing = null;
      }
      if (state.trick.length === 0) {
        var round = rounds[rounds.length - 1];
        if (!round) fail("a card is played before any deal");
        round.tricks.push(steps.length);
      }
    }
    /** Takes `card` out of `seat`'s hand: a card it is known to hold, else one of its hidden cards. */
    function takeFromHand(seat, card, where, verb) {
      if (state.hands[seat] && removeOne(state.hands[seat], card)) {
        removeOne(state.known[seat], card);
        return;
      }
      if (state.unknown[seat] > 0) {
        state.unknown[seat] -= 1;
        return;
      }
      fail(where + ": " + allNames[seat] + " " + verb + " " + card + ", which it does not hold");
    }
    /** Makes `card` of `seat`'s hand public (an Oh 7? bet, a revealed `?`), turning a hidden card up if need be. */
    function showFromHand(seat, card, where, verb) {
      var hand = state.hands[seat];
      var known = state.known[seat];
      var held = hand ? hand.filter(function (c) { return c === card; }).length : 0;
      var shown = known.filter(function (c) { return c === card; }).length;
      if (shown < held) { known.push(card); return; }
      if (state.unknown[seat] > 0) { // each bet is a card not bet with before (R-1.1): one more of the hidden cards
        state.unknown[seat] -= 1;
        hand.push(card);
        known.push(card);
        return;
      }
      if (held === 0) fail(where + ": " + allNames[seat] + " " + verb + " " + card + ", which it does not hold");
    }
    function takeFromPile(card, where, what) {
      if (state.pileHidden > 0) {
        state.pileHidden -= 1;
        return card;
      }
      if (state.pile[0] !== card) fail(where + ": " + what);
      return state.pile.shift();
    }

    function feed(event) {
      var index = model.events;
      var where = "event " + index;
      if (event === null || typeof event !== "object" || Array.isArray(event) || typeof event.type !== "string") {
        fail(where + ": not an event object");
      }
      model.events += 1;
      var type = event.type;
      if (INPUT_EVENTS[type]) {
        if (type === "action") lastAction = event;
        return false;
      }
      var action = lastAction;
      lastAction = null;
      switch (type) {
        case "deal": {
          if (!isInt(event.round) || event.round < 0) fail(where + ": a deal needs its round number");
          resetRound();
          if (!Array.isArray(event.hands) || event.hands.length !== players) {
            fail(where + ": a deal must hold " + players + " hands");
          }
          state.hands = event.hands.map(function (hand, seat) {
            if (hand !== null) return cards(hand, where + ": hand " + seat);
            var sizes = event.hand_sizes;
            state.unknown[seat] = count(Array.isArray(sizes) ? sizes[seat] : undefined, where + ": hand " + seat + "'s size (hand_sizes)");
            return [];
          });
          if (duel) state.hands.push([]);
          if (event.discard !== undefined) state.discard = cards(event.discard, where + ": the discard");
          else if (event.discard_size !== undefined) state.discardHidden = count(event.discard_size, where + ": discard_size");
          if (event.pile !== undefined) state.pile = cards(event.pile, where + ": the Dummy's pile");
          else if (event.pile_size !== undefined) state.pileHidden = count(event.pile_size, where + ": pile_size");
          if (event.trump_card !== undefined) {
            if (!validCard(event.trump_card)) fail(where + ": bad trump card");
            state.trumpCard = event.trump_card;
            state.trump = event.trump_card[1];
          }
          state.dealer = isInt(event.dealer) && event.dealer >= 0 && event.dealer < players ? event.dealer : null;
          state.handSize = isInt(event.hand_size) ? event.hand_size : state.hands[0].length + state.unknown[0];
          if (event.leader !== undefined) state.firstLeader = seatOf({ seat: event.leader }, where, players);
          var fresh = state.round !== event.round || rounds.length === 0;
          state.round = event.round;
          if (fresh) rounds.push({ round: event.round, start: steps.length, tricks: [] });
          else rounds[rounds.length - 1].tricks = [];
          var parts = ["Round " + (event.round + 1) + ": " + state.handSize + " cards each"];
          if (isInt(event.redeals)) parts[0] += " (redeal " + event.redeals + ")";
          if (state.dealer !== null) parts.push(allNames[state.dealer] + " deals");
          if (state.trumpCard) parts.push("trump card " + cardLabel(state.trumpCard));
          if (state.firstLeader !== null) parts.push(allNames[state.firstLeader] + " leads");
          state.caption = parts.join(", ") + ".";
          break;
        }
        case "bid": {
          var bidder = seatOf(event, where, players);
          if (!isInt(event.bid) || event.bid < 0) fail(where + ": bad bid");
          state.bids[bidder] = event.bid;
          state.caption = allNames[bidder] + " bids " + event.bid + timing(action) + ".";
          break;
        }
        case "bets": {
          var betCards = cards(event.cards, where + ": the bet cards");
          if (betCards.length !== players) fail(where + ": one bet card per player expected");
          var betValues = numbers(event.bets, seats, where + ": the bets");
          betCards.forEach(function (card, seat) {
            if (state.hands[seat] === undefined) fail(where + ": " + allNames[seat] + " bets before any deal");
            showFromHand(seat, card, where, "bets with");
          });
          state.attempts.push({ attempt: isInt(event.attempt) ? event.attempt : state.attempts.length,
                                cards: betCards, bets: betValues, total: event.total });
          state.caption = "Bets" + (state.attempts.length > 1 ? " (attempt " + state.attempts.length + ")" : "") +
            ": " + betCards.map(function (card, seat) { return allNames[seat] + " " + cardLabel(card); }).join(", ") +
            "; total " + String(event.total) + (event.total === 7 ? ", so everyone bets again." : ".");
          break;
        }
        case "redeal": {
          state.caption = "The bets summed to 7 three times: the round is dealt again.";
          break;
        }
        case "reveal": {
          var revealer = seatOf(event, where, players);
          if (state.hands[revealer] === undefined) fail(where + ": a reveal before any deal");
          var holds = state.hands[revealer].indexOf("?") >= 0;
          if (!holds && state.unknown[revealer] === 0) {
            fail(where + ": " + allNames[revealer] + " reveals the Interrobang without holding it");
          }
          if (!holds) { state.unknown[revealer] -= 1; state.hands[revealer].push("?"); }
          state.revealer = revealer;
          state.known[revealer].push("?");
          state.caption = allNames[revealer] + " reveals the Interrobang " + cardLabel("?") + " to win the tie.";
          break;
        }
        case "leader": {
          var leader = seatOf(event, where, players);
          state.firstLeader = leader;
          state.trump = event.trump === null || event.trump === undefined ? null : String(event.trump);
          if (event.bets !== undefined) state.finalBets = numbers(event.bets, seats, where + ": the bets");
          if (event.dummy_up !== undefined) {
            state.dummyUp = cards(event.dummy_up, where + ": the Dummy's face-up cards");
            state.dummyUp.forEach(function (card) {
              if (state.pileHidden > 0) state.pileHidden -= 1;
              else if (!removeOne(state.pile, card)) fail(where + ": the Dummy turns up " + card + ", not in its pile");
            });
          }
          state.caption = allNames[leader] + " leads the first trick; " +
            (state.trump ? "trump is " + (SUIT_NAME[state.trump] || state.trump) + "." : "no trump.") +
            (state.dummyUp.length ? " The Dummy turns up " + state.dummyUp.map(cardLabel).join(" ") + "." : "");
          break;
        }
        case "play": {
          var player = seatOf(event, where);
          beginTrickIfNeeded();
          if (family === "black-sevens") {
            var set = cards(event.cards, where + ": the cards played");
            if (set.length === 0) fail(where + ": an empty play");
            set.forEach(function (card) { takeFromHand(player, card, where, "plays"); });
            state.trick.push([player, set]);
            if (state.standing === null || beats(set, state.trick[state.standing][1])) {
              state.standing = state.trick.length - 1;
            }
            state.caption = allNames[player] + " plays " + set.map(cardLabel).join(" ") + timing(action) + ".";
            break;
          }
          var card = event.card;
          if (!validCard(card)) fail(where + ": bad card " + JSON.stringify(card));
          var text = allNames[player] + " plays " + cardLabel(card);
          if (duel && player === DUMMY_SEAT) {
            if (event.from_pile) {
              takeFromPile(card, where, "the Dummy leads " + card + ", not its pile's top card");
              text = "The Dummy leads its pile's top card, " + cardLabel(card);
            } else {
              if (!validCard(event.turned)) fail(where + ": the Dummy turns up a card that is not its pile's top card");
              state.dummyUp.push(takeFromPile(event.turned, where, "the Dummy turns up a card that is not its pile's top card"));
              if (!removeOne(state.dummyUp, card)) fail(where + ": the Dummy plays " + card + ", not face up");
              text = "The Dummy turns up " + cardLabel(event.turned) + " and plays " + cardLabel(card);
            }
          } else {
            if (!state.hands[player]) fail(where + ": " + allNames[player] + " plays " + card + ", which it does not hold");
            takeFromHand(player, card, where, "plays");
            text += timing(action);
          }
          state.trick.push([player, card]);
          state.caption = text + ".";
          break;
        }
        case "trick":
        case "hand": {
          var winner = seatOf({ seat: event.winner }, where);
          var plays = event.plays;
          if (!Array.isArray(plays) || JSON.stringify(plays) !== JSON.stringify(state.trick)) {
            fail(where + ": the " + type + " differs from the cards played");
          }
          state.trickWinner = winner;
          state.tricksWon[winner] += 1;
          state.tricksDone += 1;
          state.caption = (type === "trick" ? "Trick " : "Hand ") + state.tricksDone + " goes to " + allNames[winner] +
            (type === "hand" && Array.isArray(event.cards) ? " with " + cards(event.cards, where).map(cardLabel).join(" ") : "") + ".";
          break;
        }
        case "round_end": {
          var points = numbers(event.points, players, where + ": the round's points");
          state.scores = numbers(event.scores, players, where + ": the scores");
          summaries.push({ event: clone(event), points: points, scores: state.scores.slice() });
          if (family === "black-sevens") { // each last card leaves the hand for the table: its points
            state.lastCards = cards(event.last_cards, where + ": the last cards");
            if (state.lastCards.length !== players) fail(where + ": one last card per player expected");
            state.lastCards.forEach(function (card, seat) {
              var hand = state.hands[seat] || [];
              var hidden = state.unknown[seat] || 0;
              var fits = hidden === 0 ? JSON.stringify(hand) === JSON.stringify([card])
                                      : hand.length === 0 && hidden === 1; // a hidden last card: only its count is known
              if (!fits) fail(where + ": " + allNames[seat] + "'s last card is not " + card);
              state.hands[seat] = [];
              state.unknown[seat] = 0;
              state.known[seat] = [];
            });
          }
          state.caption = "Round " + (isInt(event.round) ? event.round + 1 : summaries.length) + " ends: " +
            names.map(function (name, seat) { return name + " " + (points[seat] >= 0 ? "+" : "") + points[seat]; }).join(", ") + ".";
          break;
        }
        case "game_end": {
          state.scores = numbers(event.scores, players, where + ": the final scores");
          var ranks = event.ranks === null || event.ranks === undefined ? null : numbers(event.ranks, players, where + ": the ranks");
          state.over = { ranks: ranks, aborted: Boolean(event.aborted) || ranks === null };
          state.caption = state.over.aborted ? "The game was aborted by a safety cap: no ranks." :
            "Game over: " + names.map(function (name, seat) { return name + " #" + ranks[seat]; }).join(", ") + ".";
          break;
        }
        case "forfeit": {
          var loser = seatOf(event, where, players);
          var reason = String(event.reason || "");
          state.forfeits[loser] = { status: String(event.status), reason: reason };
          state.caption = allNames[loser] + " forfeits (" + String(event.status) + ")" + (reason ? ": " + reason : "") +
            ". The fallback policy plays for it from now on.";
          break;
        }
        default:
          return false; // An event this viewer does not know (a newer engine's): not a step.
      }
      snapshot(index);
      return true;
    }

    snapshot(-1);
    return { model: model, feed: feed };
  }

  /**
   * Reads a whole replay document into its model (see createReader): the table at every step.
   * Throws ReplayError naming the first event that does not hold together.
   */
  function readReplay(doc, live) {
    var reader = createReader(doc, live);
    (doc.events || []).forEach(reader.feed);
    return reader;
  }

  // DOM helpers (text only, never HTML) ------------------------------------------------------

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "text") node.textContent = String(value);
        else if (key === "className") node.className = value;
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function cardNode(code, extraClass) {
    var face = cardFace(code);
    return el("span", { className: "sv-card sv-" + face.kind + (extraClass ? " " + extraClass : ""),
                        "data-card": code, title: face.title, role: "img", "aria-label": face.title },
              el("span", { className: "sv-rank", text: face.rank }),
              face.pip ? el("span", { className: "sv-pip", text: face.pip }) : null);
  }

  /** A card of the seat's own hand that it may play or bet now: a button (docs/replays.md). */
  function cardButton(code, label) {
    var face = cardFace(code);
    return el("button", { type: "button", className: "sv-card sv-" + face.kind + " sv-legal",
                          "data-card": code, "data-legal": true, title: label + " " + face.title,
                          "aria-label": label + " " + face.title },
              el("span", { className: "sv-rank", text: face.rank }),
              face.pip ? el("span", { className: "sv-pip", text: face.pip }) : null);
  }

  /** A card's face inside a choice button: a picture only (the button carries the words). */
  function faceNode(code) {
    var face = cardFace(code);
    return el("span", { className: "sv-card sv-mini sv-" + face.kind, "aria-hidden": "true" },
              el("span", { className: "sv-rank", text: face.rank }),
              face.pip ? el("span", { className: "sv-pip", text: face.pip }) : null);
  }

  function backNode(title) {
    return el("span", { className: "sv-card sv-back", "data-hidden": true, title: title || "a hidden card",
                        role: "img", "aria-label": title || "a hidden card" });
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // The viewer --------------------------------------------------------------------------------

  function parseHash(hash) {
    var out = {};
    String(hash || "").replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at > 0) out[decodeURIComponent(pair.slice(0, at))] = decodeURIComponent(pair.slice(at + 1));
    });
    return out;
  }

  /**
   * `reader` is createReader's {model, feed}. `previous` is the moment of the viewer this one
   * replaces in the same element (a newer document of the same match): its step and perspective
   * are kept, and a viewer that was at the end follows the new end.
   */
  function Viewer(root, reader, options, previous) {
    this.root = root;
    this.reader = reader;
    this.model = reader.model;
    this.options = options;
    this.index = 0;
    this.perspective = this.resolvePerspective(null);
    this.speed = 1;
    this.timer = null;
    this.touched = false; // the address bar shows a moment only once one was asked for
    this.live = false;
    this.clocks = {}; // seat -> its clock since the last `turn` (see startClock)
    this.clockTimer = null;
    this.asked = null; // the prompt this viewer offers (see prompt)
    this.destroyed = false;
    this.build();
    if (options.live) this.setLive(true, true);
    var last = this.model.steps.length - 1;
    if (previous) {
      this.index = previous.atEnd ? last : Math.min(previous.index, last);
      this.perspective = this.resolvePerspective(previous.perspective);
      this.touched = previous.touched;
      this.setSpeed(previous.speed);
      this.render();
      if (previous.playing && this.index < last) this.play();
    } else if (!(options.hash && this.applyHash(global.location.hash))) {
      if (this.live) this.index = last; // a late joiner sees the table as it is now
      this.render();
    }
  }

  /**
   * The perspectives this document can show: every hand and each seat's view for a full replay;
   * only what it holds for a document filtered for an audience (docs/live.md), whose hidden
   * cards no perspective could show.
   */
  Viewer.prototype.perspectives = function () {
    var view = this.model.view;
    if (view === "public") return ["public"];
    if (view !== null) return [view];
    var all = ["all"];
    for (var seat = 0; seat < this.model.players; seat++) all.push(seat);
    return all;
  };

  /** `value` ("all", "public", a seat, or its text) if this document can show it, else its default. */
  Viewer.prototype.resolvePerspective = function (value) {
    var allowed = this.perspectives();
    var seat = typeof value === "number" ? value : /^\d+$/.test(String(value)) ? parseInt(value, 10) : NaN;
    if (allowed.indexOf(seat) >= 0) return seat;
    if (allowed.indexOf(value) >= 0) return value;
    return allowed[0];
  };

  Viewer.prototype.perspectiveLabel = function (value) {
    var names = this.model.names;
    if (value === "all") return "All hands";
    if (value === "public") return "Public: what every seat knows";
    if (value === this.model.view) return "What " + names[value] + " sees (this seat)";
    return "What " + names[value] + " sees";
  };

  Viewer.prototype.build = function () {
    var self = this;
    var model = this.model;
    var root = this.root;
    clear(root);
    root.classList.remove("sv-failed");
    root.classList.add("septet-viewer", "sv-ready");
    root.setAttribute("data-game", model.game);
    root.setAttribute("data-steps", String(model.steps.length));
    if (model.view !== null) root.setAttribute("data-view", String(model.view));
    else root.removeAttribute("data-view");
    if (!root.hasAttribute("tabindex")) root.setAttribute("tabindex", "0");

    var title = el("h2", { className: "sv-title", text: GAME_NAMES[model.game] || model.game });
    this.liveMark = el("span", { className: "sv-live", "data-role": "live", role: "status",
                                 "aria-label": "Live: this match is being played now", title: "Being played now" },
                       el("span", { className: "sv-live-dot", "aria-hidden": "true" }), "LIVE");
    var who = el("p", { className: "sv-players", text: model.names.join(" \u00B7 ") });
    this.header = el("header", { className: "sv-header" }, title, who);
    this.status = el("div", { className: "sv-status" });
    this.counter = el("span", { className: "sv-counter", "data-role": "step" });
    this.where = el("span", { className: "sv-where", "data-role": "where" });
    this.caption = el("p", { className: "sv-caption", "data-role": "caption", "aria-live": "polite" });
    this.jumpButton = el("button", { type: "button", className: "sv-button sv-jump", "data-action": "live", hidden: true,
                                     title: "Jump to the table as it is now (End)", text: "Jump to live \u21E5" });
    this.jumpButton.addEventListener("click", function () { self.command("last"); });
    this.status.appendChild(this.counter);
    this.status.appendChild(this.where);
    this.status.appendChild(this.jumpButton);
    this.notice = el("p", { className: "sv-notice", "data-role": "end", role: "status", hidden: true });

    this.table = el("div", { className: "sv-table", "data-role": "table" });
    this.choices = el("div", { className: "sv-choices", "data-role": "choices", role: "group",
                               "aria-label": "Your decision", hidden: true });
    this.scores = el("div", { className: "sv-scores", "data-role": "scores" });

    function button(action, label, help) {
      var node = el("button", { type: "button", className: "sv-button", "data-action": action, title: help,
                                "aria-label": help, text: label });
      node.addEventListener("click", function () { self.command(action); });
      return node;
    }
    this.playButton = button("play", PLAY_LABEL, "Play / pause (space)");
    var controls = el("div", { className: "sv-controls", role: "toolbar", "aria-label": "Replay controls" },
      button("first", "\u21E4 Start", "Start (Home)"),
      button("prev-trick", "\u00AB Trick", "Previous trick (up, or shift+left)"),
      button("back", "\u2039 Step", "Step back (left)"),
      this.playButton,
      button("forward", "Step \u203A", "Step forward (right)"),
      button("next-trick", "Trick \u00BB", "Next trick (down, or shift+right)"),
      button("last", "End \u21E5", "End (End)"));

    this.scrubber = el("input", { type: "range", min: "0", max: String(model.steps.length - 1), value: "0",
                                  className: "sv-scrubber", "data-role": "scrubber", "aria-label": "Step" });
    this.scrubber.addEventListener("input", function () { self.goTo(parseInt(self.scrubber.value, 10)); });

    this.roundSelect = el("select", { "data-role": "seek-round", "aria-label": "Round" });
    this.addRoundOptions();
    this.roundSelect.addEventListener("change", function () {
      var round = model.rounds[parseInt(self.roundSelect.value, 10)];
      if (round) self.goTo(round.start);
    });
    this.trickSelect = el("select", { "data-role": "seek-trick", "aria-label": "Trick" });
    this.trickSelect.addEventListener("change", function () {
      var round = model.rounds[parseInt(self.roundSelect.value, 10)];
      var start = round && round.tricks[parseInt(self.trickSelect.value, 10)];
      if (start !== undefined) self.goTo(start);
    });
    this.speedSelect = el("select", { "data-role": "speed", "aria-label": "Speed" });
    SPEEDS.forEach(function (speed) {
      self.speedSelect.appendChild(el("option", { value: String(speed), text: speed + "\u00D7", selected: speed === 1 }));
    });
    this.speedSelect.addEventListener("change", function () { self.setSpeed(parseFloat(self.speedSelect.value)); });
    var perspectives = this.perspectives();
    this.perspectiveSelect = el("select", { "data-role": "perspective", "aria-label": "Perspective",
                                            disabled: perspectives.length < 2 });
    perspectives.forEach(function (value) {
      self.perspectiveSelect.appendChild(el("option", { value: String(value), text: self.perspectiveLabel(value) }));
    });
    this.perspectiveSelect.addEventListener("change", function () { self.setPerspective(self.perspectiveSelect.value); });
    this.permalink = el("a", { className: "sv-permalink", "data-role": "permalink", text: "Link to this moment" });

    function labelled(text, control) {
      return el("label", { className: "sv-field" }, el("span", { text: text }), control);
    }
    var seek = el("div", { className: "sv-seek" },
      labelled("Round", this.roundSelect), labelled("Trick", this.trickSelect),
      labelled("Speed", this.speedSelect), labelled("View", this.perspectiveSelect), this.permalink);
    var keys = el("p", { className: "sv-keys",
      text: "Keys: space play/pause \u00B7 \u2190 \u2192 step \u00B7 \u2191 \u2193 trick \u00B7 PgUp PgDn round \u00B7 Home End \u00B7 " +
            "+ \u2212 speed" + (model.view === null ? " \u00B7 A all hands \u00B7 1-" + model.players + " a seat's view" : "") });

    root.appendChild(this.header);
    root.appendChild(this.status);
    root.appendChild(this.caption);
    root.appendChild(this.notice);
    root.appendChild(this.table);
    root.appendChild(this.choices);
    root.appendChild(el("div", { className: "sv-panel" }, controls, this.scrubber, seek, keys));
    root.appendChild(this.scores);

    this.onKey = function (event) { self.key(event); };
    var keyTarget = this.options.keyboard === "element" ? root : global.document;
    keyTarget.addEventListener("keydown", this.onKey);
    this.keyTarget = keyTarget;
    if (this.options.hash) {
      this.onHash = function () { self.applyHash(global.location.hash); };
      global.addEventListener("hashchange", this.onHash);
    }
  };

  /** Adds to the Round list the rounds it does not hold yet (a live match deals new ones). */
  Viewer.prototype.addRoundOptions = function () {
    var select = this.roundSelect;
    var rounds = this.model.rounds;
    for (var slot = select.options.length; slot < rounds.length; slot++) {
      select.appendChild(el("option", { value: String(slot), text: "Round " + (rounds[slot].round + 1) }));
    }
  };

  Viewer.prototype.key = function (event) {
    var target = event.target;
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && target !== this.root && target.closest) {
      if (target.closest("input, textarea, select, [contenteditable]")) return;
      if ((event.key === " " || event.key === "Enter") && target.closest("button, a")) return; // its own click
      var other = target.closest(".septet-viewer");
      if (other && other !== this.root) return;
    }
    var map = {
      " ": "play", "ArrowLeft": event.shiftKey ? "prev-trick" : "back",
      "ArrowRight": event.shiftKey ? "next-trick" : "forward", "ArrowUp": "prev-trick", "ArrowDown": "next-trick",
      "PageUp": "prev-round", "PageDown": "next-round", "Home": "first", "End": "last",
      "+": "faster", "=": "faster", "-": "slower", "a": "all", "A": "all"
    };
    var action = map[event.key];
    if (this.model.view !== null && action === "all") return; // one perspective only
    if (!action && /^[1-7]$/.test(event.key) && parseInt(event.key, 10) <= this.model.players) {
      if (this.model.view !== null) return;
      this.setPerspective(String(parseInt(event.key, 10) - 1));
      event.preventDefault();
      return;
    }
    if (!action) return;
    event.preventDefault();
    this.command(action);
  };

  Viewer.prototype.command = function (action) {
    var steps = this.model.steps;
    var rounds = this.model.rounds;
    var self = this;
    function trickStarts() {
      var all = [];
      rounds.forEach(function (r) { all = all.concat(r.tricks); });
      return all;
    }
    if (action !== "play") this.pause();
    switch (action) {
      case "play": if (this.timer) this.pause(); else this.play(); return;
      case "back": this.goTo(this.index - 1); return;
      case "forward": this.goTo(this.index + 1); return;
      case "first": this.goTo(0); return;
      case "last": this.goTo(steps.length - 1); return;
      case "prev-trick": {
        var before = trickStarts().filter(function (s) { return s < self.index; });
        this.goTo(before.length ? before[before.length - 1] : 0);
        return;
      }
      case "next-trick": {
        var after = trickStarts().filter(function (s) { return s > self.index; });
        this.goTo(after.length ? after[0] : steps.length - 1);
        return;
      }
      case "prev-round": {
        var starts = rounds.map(function (r) { return r.start; }).filter(function (s) { return s < self.index; });
        this.goTo(starts.length ? starts[starts.length - 1] : 0);
        return;
      }
      case "next-round": {
        var next = rounds.map(function (r) { return r.start; }).filter(function (s) { return s > self.index; });
        this.goTo(next.length ? next[0] : steps.length - 1);
        return;
      }
      case "faster": case "slower": {
        var at = SPEEDS.indexOf(this.speed) + (action === "faster" ? 1 : -1);
        this.setSpeed(SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, at))]);
        return;
      }
      case "all": this.setPerspective("all"); return;
      default: return;
    }
  };

  Viewer.prototype.goTo = function (index) {
    if (!isInt(index)) return;
    this.touched = true;
    this.index = Math.max(0, Math.min(this.model.steps.length - 1, index));
    this.render();
  };

  Viewer.prototype.setPerspective = function (value) {
    this.perspective = this.resolvePerspective(value);
    this.touched = true;
    this.render();
  };

  Viewer.prototype.setSpeed = function (speed) {
    if (SPEEDS.indexOf(speed) < 0) return;
    this.speed = speed;
    this.speedSelect.value = String(speed);
    if (this.timer) { this.pause(); this.play(); }
  };

  Viewer.prototype.play = function () {
    var self = this;
    if (this.index >= this.model.steps.length - 1) this.goTo(0);
    function tick() {
      if (self.index >= self.model.steps.length - 1) { self.pause(); return; }
      self.goTo(self.index + 1);
      var shot = self.model.steps[self.index];
      var hold = shot.trickWinner !== null && shot.trick.length ? 2 : 1; // a closed trick stays a moment
      self.timer = global.setTimeout(tick, hold * STEP_MS / self.speed);
    }
    this.timer = global.setTimeout(tick, STEP_MS / this.speed);
    this.playButton.textContent = PAUSE_LABEL;
    this.root.setAttribute("data-playing", "");
  };

  Viewer.prototype.pause = function () {
    if (this.timer) global.clearTimeout(this.timer);
    this.timer = null;
    this.playButton.textContent = PLAY_LABEL;
    this.root.removeAttribute("data-playing");
  };

  /** Restores a moment and perspective from `#step=N&seat=S`; false when the hash names none. */
  Viewer.prototype.applyHash = function (hash) {
    var wanted = parseHash(hash);
    if (wanted.step === undefined && wanted.seat === undefined) return false;
    this.pause();
    var step = parseInt(wanted.step, 10);
    if (isInt(step)) this.index = Math.max(0, Math.min(this.model.steps.length - 1, step));
    if (wanted.seat !== undefined) this.perspective = this.resolvePerspective(wanted.seat);
    this.touched = true;
    this.render();
    return true;
  };

  /** Keeps the address bar on the moment shown, a little after it settles (browsers throttle
   * history updates, and stepping fast would otherwise make hundreds of them). */
  Viewer.prototype.scheduleHash = function () {
    var self = this;
    if (this.hashTimer) global.clearTimeout(this.hashTimer);
    this.hashTimer = global.setTimeout(function () {
      self.hashTimer = null;
      var hash = self.momentHash();
      if (global.location.hash !== hash && global.history && global.history.replaceState) {
        global.history.replaceState(null, "", hash);
      }
    }, HASH_DELAY_MS);
  };

  Viewer.prototype.momentHash = function () {
    return "#step=" + this.index + "&seat=" + this.perspective;
  };

  /** Where the viewer stands, for a viewer that replaces it (see the constructor). */
  Viewer.prototype.moment = function () {
    return { index: this.index, perspective: this.perspective, atEnd: this.index === this.model.steps.length - 1,
             touched: this.touched, speed: this.speed, playing: Boolean(this.timer) };
  };

  Viewer.prototype.destroy = function () {
    this.destroyed = true; // a page may still hold it: append and prompt then do nothing
    this.pause();
    this.stopTicking();
    if (this.hashTimer) global.clearTimeout(this.hashTimer);
    this.keyTarget.removeEventListener("keydown", this.onKey);
    if (this.onHash) global.removeEventListener("hashchange", this.onHash);
  };

  // A live match -------------------------------------------------------------------------------

  /**
   * Adds what a live stream sent (docs/live.md): one message, a batch (a list), or a list of
   * batches. Replay events extend the table, read once each; `turn` starts clocks, `prompt` is
   * offered when the viewer was mounted with an `onChoose`, `answered` withdraws it, `end` ends
   * the live mode, `match` (the header again) is skipped. A viewer at the latest step follows
   * the new latest step; one the user moved back stays, and offers "Jump to live". Returns
   * false (and shows why in place of the table) when an event does not hold together.
   */
  Viewer.prototype.append = function (messages) {
    var self = this;
    if (this.destroyed) return false;
    var last = this.model.steps.length - 1;
    var following = this.index === last && !this.timer;
    var ended = null;
    var clocksChanged = false;
    try {
      if (typeof messages === "string") messages = JSON.parse(messages);
      (function each(item) {
        if (Array.isArray(item)) { item.forEach(each); return; }
        if (item === null || typeof item !== "object") fail("event " + self.model.events + ": not an event object");
        switch (item.type) {
          case "match": return;
          case "turn": self.startClocks(item); clocksChanged = true; return;
          case "prompt": if (typeof self.options.onChoose === "function") self.prompt(item, self.options.onChoose); return;
          case "answered":
            if (self.asked && (item.decision === undefined || item.decision === self.asked.message.decision)) self.clearPrompt();
            return;
          case "end": ended = item; return;
          default:
            clocksChanged = self.stopClocksFor(item) || clocksChanged;
            self.reader.feed(item);
        }
      })(messages);
    } catch (error) {
      showError(this.root, error instanceof ReplayError || error instanceof SyntaxError ? error.message : "the viewer failed: " + String(error));
      return false;
    }
    var grown = this.model.steps.length - 1 !== last;
    if (grown) {
      this.root.setAttribute("data-steps", String(this.model.steps.length));
      this.scrubber.max = String(this.model.steps.length - 1);
      this.addRoundOptions();
      if (following) this.index = this.model.steps.length - 1;
    }
    if (grown || clocksChanged) this.render();
    if (ended) this.end(ended);
    return true;
  };

  /** Turns the live mode on or off: the LIVE mark, following the play, the clocks and the prompt. */
  Viewer.prototype.setLive = function (live, quiet) {
    live = Boolean(live);
    this.live = live;
    if (live) {
      this.root.setAttribute("data-live", "");
      if (!this.liveMark.parentNode) this.header.insertBefore(this.liveMark, this.header.children[1] || null);
    } else {
      this.root.removeAttribute("data-live");
      if (this.liveMark.parentNode) this.liveMark.parentNode.removeChild(this.liveMark);
      this.clocks = {};
      this.stopTicking();
      this.clearPrompt(true);
    }
    if (!quiet) this.render();
  };

  /** An `end` message: the match is over; the viewer is a replay viewer of what it was sent. */
  Viewer.prototype.end = function (message) {
    var status = String(message.status || "finished");
    var text = "";
    if (status === "finished") {
      if (message.replay === false) text = "The match is over. Its full replay is published once its set is over.";
    } else {
      text = "The match was " + status + (message.reason ? ": " + String(message.reason) : "") + ".";
      if (message.reason) this.model.reason = String(message.reason);
    }
    this.notice.textContent = text;
    if (text) this.notice.removeAttribute("hidden");
    else this.notice.setAttribute("hidden", "");
    this.setLive(false);
  };

  // Clocks: counted from when a `turn` arrives, never from the server's wall clock --------------

  function now() {
    return global.performance && global.performance.now ? global.performance.now() : Date.now();
  }

  function seconds(value) {
    return typeof value === "number" && isFinite(value) && value >= 0 ? value : null;
  }

  /** `seat` is asked: its clock counts the decision's time down, then the bank. */
  Viewer.prototype.startClock = function (seat, decision, bank) {
    this.clocks[seat] = { seat: seat, decision: seconds(decision), bank: seconds(bank), since: now(), stopped: null };
    if (this.asked && !this.asked.chosen && this.askedSeat() === seat) this.asked.clock = this.clocks[seat];
    this.startTicking();
  };

  Viewer.prototype.startClocks = function (message) {
    var self = this;
    if (!this.live || !Array.isArray(message.seats)) return;
    message.seats.forEach(function (entry) {
      if (entry && isInt(entry.seat) && entry.seat >= 0 && entry.seat < self.model.players) {
        self.startClock(entry.seat, entry.decision_seconds, entry.bank_seconds);
      }
    });
  };

  /** Stops the clocks of the seats an event says have decided; true if one stopped. */
  Viewer.prototype.stopClocksFor = function (event) {
    var stopped = false;
    var self = this;
    function stop(seat) {
      var clock = self.clocks[seat];
      if (clock && clock.stopped === null) { clock.stopped = now(); stopped = true; }
    }
    var decided = { action: true, forfeit: true, bid: true, play: true, reveal: true };
    if (decided[event.type] && isInt(event.seat)) stop(event.seat);
    if (event.type === "bets" || event.type === "game_end") Object.keys(this.clocks).forEach(function (seat) { stop(Number(seat)); });
    // A seat that forfeits is asked nothing more (the fallback policy plays for it). Its other
    // actions say nothing of a prompt: a batch may hold the last answer and the next prompt.
    if (event.type === "forfeit" && this.asked && event.seat === this.askedSeat()) this.clearPrompt(true);
    return stopped;
  };

  /** {text, phase} of a clock now: phase "decision", "bank", "out", or "stopped". */
  function clockReading(clock) {
    var elapsed = ((clock.stopped === null ? now() : clock.stopped) - clock.since) / 1000;
    var decision = clock.decision;
    var bank = clock.bank;
    if (decision === null && bank === null) return { text: "thinking", phase: clock.stopped === null ? "decision" : "stopped" };
    var overrun = decision === null ? elapsed : Math.max(0, elapsed - decision);
    var bankLeft = bank === null ? null : Math.max(0, bank - overrun);
    if (clock.stopped !== null) {
      return { text: bankLeft === null ? "done" : "bank " + formatSeconds(bankLeft), phase: "stopped" };
    }
    if (decision !== null && elapsed < decision) {
      return { text: formatSeconds(decision - elapsed) + (bankLeft === null ? "" : " + bank " + formatSeconds(bankLeft)), phase: "decision" };
    }
    if (bankLeft !== null && bankLeft > 0) return { text: "bank " + formatSeconds(bankLeft), phase: "bank" };
    return { text: formatSeconds(0), phase: "out" };
  }

  /** 0:27, 1:45 (whole seconds rounded up, as a countdown shows them), or 4.2s under ten seconds. */
  function formatSeconds(value) {
    if (value < 10) return value.toFixed(1) + "s";
    var whole = Math.ceil(value);
    return Math.floor(whole / 60) + ":" + ("0" + (whole % 60)).slice(-2);
  }

  function clockNode(clock, role) {
    var node = el("span", { className: "sv-clock", "data-role": role, "data-seat": String(clock.seat) });
    updateClockNode(node, clock);
    return node;
  }

  function updateClockNode(node, clock) {
    var reading = clockReading(clock);
    var text = reading.text;
    if (node.textContent !== text) node.textContent = text;
    node.setAttribute("data-phase", reading.phase);
    if (reading.phase === "stopped") { node.removeAttribute("data-running"); node.setAttribute("data-stopped", ""); }
    else { node.setAttribute("data-running", ""); node.removeAttribute("data-stopped"); }
    node.setAttribute("aria-label", (reading.phase === "stopped" ? "Clock, stopped: " : "Clock: ") + reading.text);
  }

  Viewer.prototype.startTicking = function () {
    var self = this;
    if (this.clockTimer) return;
    this.clockTimer = global.setInterval(function () { self.tick(); }, CLOCK_TICK_MS);
  };

  Viewer.prototype.stopTicking = function () {
    if (this.clockTimer) global.clearInterval(this.clockTimer);
    this.clockTimer = null;
  };

  /** Updates the running clocks' text in place (the table is not redrawn). */
  Viewer.prototype.tick = function () {
    var self = this;
    var running = false;
    Array.prototype.forEach.call(this.root.querySelectorAll(".sv-clock"), function (node) {
      var clock = self.clocks[Number(node.getAttribute("data-seat"))];
      if (node.getAttribute("data-role") === "prompt-clock" && self.asked) clock = self.asked.clock;
      if (clock) updateClockNode(node, clock);
    });
    Object.keys(this.clocks).forEach(function (seat) { if (self.clocks[seat].stopped === null) running = true; });
    if (this.asked && this.asked.clock.stopped === null) running = true;
    if (!running) this.stopTicking();
  };

  /** Clocks show on the latest step of a live match only: an earlier table is not "now". */
  Viewer.prototype.showsNow = function () {
    return this.live && this.index === this.model.steps.length - 1;
  };

  // A human seat's decision ----------------------------------------------------------------------

  var PROMPT_TITLES = {
    bet: "Your turn: bet with a card",
    bid: "Your turn: bid",
    play: "Your turn: play a card",
    reveal: "Reveal the Interrobang \u203D to win the tie?"
  };

  /** The seat a prompt is for: the message's `seat`, else the seat this stream is for. */
  Viewer.prototype.askedSeat = function () {
    if (!this.asked) return null;
    var seat = this.asked.message.seat;
    if (isInt(seat)) return seat;
    return isInt(this.model.view) ? this.model.view : null;
  };

  /**
   * Offers a `prompt` message's legal actions (docs/live.md): buttons in the choices area, and
   * for cards the legal cards of the seat's hand. The first choice calls `onChoose(action)` once;
   * the choices stay disabled until clearPrompt, an `answered` message or a new prompt.
   */
  Viewer.prototype.prompt = function (message, onChoose) {
    var self = this;
    if (this.destroyed || !message || typeof message !== "object" || !Array.isArray(message.legal)) return false;
    this.asked = { message: message, onChoose: onChoose, chosen: false, clock: null };
    var seat = this.askedSeat();
    var clock = seat !== null ? this.clocks[seat] : null;
    if (!clock || clock.stopped !== null) {
      clock = { seat: seat === null ? -1 : seat, decision: seconds(message.decision_seconds),
                bank: seconds(message.bank_seconds), since: now(), stopped: null };
      if (seat !== null) this.clocks[seat] = clock;
    }
    this.asked.clock = clock;
    this.startTicking();

    var box = this.choices;
    clear(box);
    var kind = String(message.kind || "");
    var sets = message.legal.some(Array.isArray);
    var head = el("div", { className: "sv-choices-head" },
      el("strong", { "data-role": "prompt-title", text: sets ? "Your turn: play a set" : PROMPT_TITLES[kind] || "Your turn" }),
      clockNode(clock, "prompt-clock"));
    var list = el("div", { className: "sv-choice-list" });
    message.legal.forEach(function (action) {
      var node = el("button", { type: "button", className: "sv-button sv-choice", "data-choice": JSON.stringify(action) });
      var verb = kind === "bet" ? "Bet with" : "Play";
      if (typeof action === "string") {
        node.appendChild(faceNode(action));
        node.setAttribute("aria-label", verb + " " + cardFace(action).title);
      } else if (Array.isArray(action)) {
        action.forEach(function (card) { node.appendChild(faceNode(String(card))); });
        node.setAttribute("aria-label", verb + " " + action.map(function (card) { return cardFace(String(card)).title; }).join(" and "));
      } else if (typeof action === "boolean") {
        node.textContent = action ? "Yes, reveal \u203D" : "No";
      } else if (kind === "bid") {
        node.textContent = String(action);
        node.setAttribute("aria-label", "Bid " + String(action));
      } else {
        node.textContent = JSON.stringify(action);
      }
      node.addEventListener("click", function () { self.choose(action, node); });
      list.appendChild(node);
    });
    var note = el("p", { className: "sv-choices-note", "data-role": "prompt-status", "aria-live": "polite",
      text: kind === "bet" || (kind === "play" && !sets) ? "Or tap a highlighted card of your hand." : "" });
    box.appendChild(head);
    box.appendChild(list);
    box.appendChild(note);
    box.removeAttribute("hidden");
    this.root.setAttribute("data-asked", kind);
    this.render();
    var shown = box.getBoundingClientRect();
    if (shown.bottom > (global.innerHeight || 0) || shown.top < 0) {
      box.scrollIntoView({ block: "end" });  // a person's turn must be in sight
    }
    return true;
  };

  /** The player chose `action` (a choice button or a card of the hand): said once, then disabled. */
  Viewer.prototype.choose = function (action, node) {
    var asked = this.asked;
    if (!asked || asked.chosen) return;
    asked.chosen = true;
    Array.prototype.forEach.call(this.root.querySelectorAll("[data-choice], [data-legal]"), function (button) {
      button.disabled = true;
    });
    if (node) node.setAttribute("data-chosen", "");
    var status = this.choices.querySelector("[data-role='prompt-status']");
    if (status) status.textContent = "Sent. Waiting for the table\u2026";
    this.root.setAttribute("data-chosen", "");
    asked.onChoose(action);
  };

  /** The prompt message on offer, or null. */
  Viewer.prototype.currentPrompt = function () {
    return this.asked ? this.asked.message : null;
  };

  /** Withdraws the prompt (answered, or no longer asked). */
  Viewer.prototype.clearPrompt = function (quiet) {
    if (!this.asked) return;
    this.asked = null;
    clear(this.choices);
    this.choices.setAttribute("hidden", "");
    this.root.removeAttribute("data-asked");
    this.root.removeAttribute("data-chosen");
    if (!quiet) this.render();
  };

  /** The cards of the asked seat's hand a click may choose, card -> action; null if none. */
  Viewer.prototype.legalCards = function (seat) {
    var asked = this.asked;
    if (!asked || seat !== this.askedSeat() || !this.showsNow()) return null;
    var kind = asked.message.kind;
    if (kind !== "play" && kind !== "bet") return null;
    var legal = {};
    asked.message.legal.forEach(function (action) {
      if (typeof action === "string") legal[action] = action;
      else if (Array.isArray(action) && action.length === 1 && typeof action[0] === "string") legal[action[0]] = action;
    });
    return legal;
  };

  // Rendering one step ------------------------------------------------------------------------

  Viewer.prototype.render = function () {
    var model = this.model;
    var shot = model.steps[this.index];
    var last = model.steps.length - 1;
    this.root.setAttribute("data-step", String(this.index));
    this.root.setAttribute("data-perspective", String(this.perspective));
    this.counter.textContent = "Step " + this.index + " / " + last;
    var where = [];
    var round = model.rounds[shot.roundSlot];
    if (round) where.push("Round " + (round.round + 1) + (this.live ? "" : " of " + model.rounds.length));
    if (shot.trickSlot >= 0) where.push((model.family === "black-sevens" ? "hand " : "trick ") + (shot.trickSlot + 1));
    this.where.textContent = where.join(", ");
    if (this.live && this.index < last) this.jumpButton.removeAttribute("hidden");
    else this.jumpButton.setAttribute("hidden", "");
    this.caption.textContent = shot.caption;
    this.scrubber.value = String(this.index);
    this.perspectiveSelect.value = String(this.perspective);
    this.syncSeek(shot);
    var hash = this.momentHash();
    this.permalink.setAttribute("href", hash);
    if (this.options.hash && this.touched) this.scheduleHash();
    this.renderTable(shot);
    this.renderScores(shot);
  };

  Viewer.prototype.syncSeek = function (shot) {
    var self = this;
    // Before the first round starts (step 0) the Round list shows round 1: so does the Trick list.
    var round = this.model.rounds[Math.max(0, shot.roundSlot)];
    var slot = String(Math.max(0, shot.roundSlot));
    var tricks = round ? round.tricks : [];
    if (this.roundSelect.value !== slot || this.trickSelect.getAttribute("data-round") !== slot ||
        this.trickSelect.options.length !== tricks.length) {
      this.roundSelect.value = slot;
      clear(this.trickSelect);
      this.trickSelect.setAttribute("data-round", slot);
      tricks.forEach(function (start, i) {
        var noun = self.model.family === "black-sevens" ? "Hand " : "Trick ";
        self.trickSelect.appendChild(el("option", { value: String(i), text: noun + (i + 1) }));
      });
    }
    this.trickSelect.value = String(Math.max(0, shot.trickSlot));
  };

  /**
   * The cards of `seat` that the current perspective may see, and how many stay face down. A
   * filtered document's hidden cards (`unknown`) are face down in every perspective.
   */
  Viewer.prototype.visibleHand = function (shot, seat) {
    var hand = shot.hands[seat] || [];
    var unknown = (shot.unknown && shot.unknown[seat]) || 0;
    var view = this.perspective;
    var blind = this.model.game === "seven-up-seven-down" && shot.handSize === 1;
    if (view === "all" || view === "public") return { shown: hand.slice(), hidden: unknown };
    if (blind) {
      return seat === view ? { shown: [], hidden: hand.length + unknown, forehead: true } : { shown: hand.slice(), hidden: unknown };
    }
    if (seat === view) return { shown: hand.slice(), hidden: unknown };
    var rest = hand.slice();
    var shown = [];
    (shot.known[seat] || []).forEach(function (card) { // Oh 7?'s bet cards and a revealed `?` are public
      if (removeOne(rest, card)) shown.push(card);
    });
    return { shown: shown, hidden: rest.length + unknown };
  };

  Viewer.prototype.renderTable = function (shot) {
    var model = this.model;
    var table = this.table;
    clear(table);
    var mine = isInt(model.view) ? model.view : null; // a seat's own stream: its hand below the table, as held
    var seatsBox = el("div", { className: "sv-seats" });
    for (var seat = 0; seat < model.players; seat++) if (seat !== mine) seatsBox.appendChild(this.seatPanel(shot, seat));
    if (model.duel) seatsBox.appendChild(this.dummyPanel(shot));
    table.appendChild(seatsBox);
    table.appendChild(this.centre(shot));
    if (mine !== null) table.appendChild(el("div", { className: "sv-mine" }, this.seatPanel(shot, mine)));
  };

  Viewer.prototype.seatPanel = function (shot, seat) {
    var self = this;
    var model = this.model;
    var clock = this.showsNow() ? this.clocks[seat] : null;
    var toPlay = Boolean(clock && clock.stopped === null);
    var badges = el("span", { className: "sv-badges" });
    function badge(text, kind) { badges.appendChild(el("span", { className: "sv-badge sv-badge-" + kind, text: text })); }
    if (model.view === seat) badge("you", "you");
    if (toPlay) badge("to play", "to-play");
    if (shot.dealer === seat) badge("dealer", "dealer");
    if (shot.firstLeader === seat) badge("first leader", "leader");
    if (shot.revealer === seat) badge("revealed \u203D", "reveal");
    if (shot.forfeits[seat]) badge("forfeited: " + shot.forfeits[seat].status, "forfeit");
    if (shot.over && shot.over.ranks) badge("#" + shot.over.ranks[seat], "rank");
    var facts = el("dl", { className: "sv-facts" });
    function fact(term, value, role) {
      facts.appendChild(el("dt", { text: term }));
      facts.appendChild(el("dd", { "data-role": role, text: value }));
    }
    fact("score", String(shot.scores[seat]), "score");
    if (model.family === "bidding") fact("bid", shot.bids[seat] === null || shot.bids[seat] === undefined ? "\u2013" : String(shot.bids[seat]), "bid");
    if (model.family === "oh7") {
      var attempts = shot.attempts.map(function (a) { return a.cards[seat]; });
      var betBox = el("dd", { "data-role": "bet" });
      if (!attempts.length) betBox.textContent = "\u2013";
      attempts.forEach(function (card, i) {
        betBox.appendChild(cardNode(card, i < attempts.length - 1 ? "sv-mini sv-superseded" : "sv-mini"));
      });
      facts.appendChild(el("dt", { text: "bet" }));
      facts.appendChild(betBox);
    }
    if (shot.round !== null) fact(model.family === "black-sevens" ? "hands won" : "tricks", String(shot.tricksWon[seat] || 0), "tricks");
    if (shot.lastCards) {
      facts.appendChild(el("dt", { text: "last card" }));
      facts.appendChild(el("dd", { "data-role": "last-card" }, cardNode(shot.lastCards[seat], "sv-mini")));
    }
    var visible = this.visibleHand(shot, seat);
    var legal = this.legalCards(seat);
    var chosen = Boolean(this.asked && this.asked.chosen);
    var hand = el("div", { className: "sv-hand" + (legal ? " sv-asked" : ""), "data-seat": String(seat), "data-role": "hand",
                           "aria-label": model.names[seat] + "'s hand" });
    var verb = this.asked && this.asked.message.kind === "bet" ? "Bet with" : "Play";
    visible.shown.forEach(function (card) {
      if (!legal) { hand.appendChild(cardNode(card)); return; }
      if (!Object.prototype.hasOwnProperty.call(legal, card)) { hand.appendChild(cardNode(card, "sv-dimmed")); return; }
      var button = cardButton(card, verb);
      button.disabled = chosen;
      button.addEventListener("click", function () { self.choose(legal[card], button); });
      hand.appendChild(button);
    });
    for (var i = 0; i < visible.hidden; i++) hand.appendChild(backNode(visible.forehead ? "on the forehead: its owner cannot see it" : null));
    var name = el("h3", { className: "sv-name" }, el("span", { className: "sv-seatno", text: "Seat " + seat }),
                  el("span", { "data-role": "name", text: model.names[seat] }), badges);
    if (clock) name.appendChild(clockNode(clock, "clock"));
    var panel = el("section", { className: "sv-seat" + (this.perspective === seat ? " sv-me" : "") +
                                (toPlay ? " sv-to-play" : "") +
                                (shot.trickWinner === seat && shot.trick.length ? " sv-won" : ""),
                                "data-seat": String(seat) },
      name, facts, hand);
    return panel;
  };

  Viewer.prototype.dummyPanel = function (shot) {
    var up = el("div", { className: "sv-hand sv-dummy-up", "data-seat": String(DUMMY_SEAT), "data-role": "dummy-up",
                         "aria-label": "the Dummy's face-up cards" });
    shot.dummyUp.forEach(function (card) { up.appendChild(cardNode(card)); });
    var pile = el("div", { className: "sv-pile", "data-role": "pile" });
    var hidden = shot.pileHidden || 0;
    if (this.perspective === "all") shot.pile.forEach(function (card) { pile.appendChild(cardNode(card, "sv-mini sv-facedown-known")); });
    else hidden += shot.pile.length;
    for (var i = 0; i < hidden; i++) pile.appendChild(backNode("the Dummy's face-down pile"));
    var bet = shot.finalBets ? String(shot.finalBets[DUMMY_SEAT]) : "2";
    return el("section", { className: "sv-seat sv-dummy", "data-seat": String(DUMMY_SEAT) },
      el("h3", { className: "sv-name" }, el("span", { className: "sv-seatno", text: "Seat 2" }),
         el("span", { "data-role": "name", text: "Dummy" })),
      el("dl", { className: "sv-facts" }, el("dt", { text: "bet" }), el("dd", { "data-role": "bet", text: bet }),
         el("dt", { text: "tricks" }), el("dd", { "data-role": "tricks", text: String(shot.tricksWon[DUMMY_SEAT] || 0) })),
      el("p", { className: "sv-sub", text: "face up" }), up,
      el("p", { className: "sv-sub", text: "pile (" + (shot.pile.length + (shot.pileHidden || 0)) + " face down)" }), pile);
  };

  Viewer.prototype.centre = function (shot) {
    var model = this.model;
    var names = model.allNames;
    var box = el("div", { className: "sv-centre" });
    var info = el("div", { className: "sv-info" });
    if (shot.trumpCard) {
      info.appendChild(el("div", { className: "sv-trump", "data-role": "trump" },
        el("span", { text: "Trump card " }), cardNode(shot.trumpCard)));
    } else if (model.family === "oh7" && shot.trump !== undefined) {
      info.appendChild(el("div", { className: "sv-trump", "data-role": "trump",
        text: shot.trump ? "Trump " + (SUIT_SYMBOL[shot.trump] || "") + " " + (SUIT_NAME[shot.trump] || shot.trump) : "No trump" }));
    }
    if (model.family === "oh7" && shot.attempts.length) {
      var bets = el("ol", { className: "sv-attempts", "data-role": "bets" });
      shot.attempts.forEach(function (attempt, i) {
        var item = el("li", { className: i < shot.attempts.length - 1 ? "sv-superseded" : "" },
                      el("span", { text: "Bets " + (i + 1) + ": " }));
        attempt.cards.forEach(function (card, seat) {
          item.appendChild(el("span", { className: "sv-bet" }, el("span", { text: names[seat] + " " }), cardNode(card, "sv-mini")));
        });
        if (model.duel) item.appendChild(el("span", { className: "sv-bet", text: "Dummy 2" }));
        item.appendChild(el("span", { className: "sv-total", text: "total " + attempt.total }));
        bets.appendChild(item);
      });
      info.appendChild(bets);
    }
    var discarded = shot.discard.length + (shot.discardHidden || 0);
    if (discarded) {
      var discard = el("div", { className: "sv-discard", "data-role": "discard" },
                       el("span", { text: "Discard (" + discarded + ", unused): " }));
      var faceDown = shot.discardHidden || 0;
      if (this.perspective === "all") shot.discard.forEach(function (card) { discard.appendChild(cardNode(card, "sv-mini sv-facedown-known")); });
      else faceDown += shot.discard.length;
      for (var i = 0; i < faceDown; i++) discard.appendChild(backNode("the discard"));
      info.appendChild(discard);
    }
    box.appendChild(info);
    var trick = el("div", { className: "sv-trick", "data-role": "trick",
                            "data-winner": shot.trickWinner === null ? null : String(shot.trickWinner) });
    trick.appendChild(el("h4", { text: model.family === "black-sevens" ? "This hand" : "This trick" }));
    shot.trick.forEach(function (play, i) {
      var seat = play[0];
      var cardsPlayed = Array.isArray(play[1]) ? play[1] : [play[1]];
      var won = shot.trickWinner === seat && (model.family !== "black-sevens" || shot.standing === i);
      var standing = model.family === "black-sevens" && shot.standing === i;
      var item = el("div", { className: "sv-play" + (won ? " sv-winner" : "") + (standing ? " sv-standing" : ""), "data-seat": String(seat) },
                    el("span", { className: "sv-who", title: "Seat " + seat + ": " + names[seat] },
                       el("span", { className: "sv-seatno", text: seat + " " }), names[seat]));
      var group = el("span", { className: "sv-set" });
      cardsPlayed.forEach(function (card) { group.appendChild(cardNode(card)); });
      item.appendChild(group);
      if (won) item.appendChild(el("span", { className: "sv-wins", text: "wins" }));
      trick.appendChild(item);
    });
    if (!shot.trick.length) trick.appendChild(el("p", { className: "sv-empty", text: "No card on the table." }));
    box.appendChild(trick);
    if (shot.over) {
      var end = el("div", { className: "sv-result", "data-role": "result" });
      if (shot.over.aborted) end.textContent = "Aborted" + (model.reason ? ": " + model.reason : "") + ".";
      else {
        var order = model.names.map(function (name, seat) { return seat; })
          .sort(function (a, b) { return shot.over.ranks[a] - shot.over.ranks[b]; });
        end.appendChild(el("h4", { text: "Result" }));
        var list = el("ol", {});
        order.forEach(function (seat) {
          list.appendChild(el("li", { value: String(shot.over.ranks[seat]),
            text: model.names[seat] + ": " + shot.scores[seat] + (shot.forfeits[seat] ? " (forfeited)" : "") }));
        });
        end.appendChild(list);
      }
      box.appendChild(end);
    }
    return box;
  };

  Viewer.prototype.renderScores = function (shot) {
    var model = this.model;
    var scores = this.scores;
    if (this.shownSummaries === shot.summaries) return; // the table changes only when a round ends
    this.shownSummaries = shot.summaries;
    clear(scores);
    scores.appendChild(el("h4", { text: "Rounds" }));
    var summaries = model.summaries.slice(0, shot.summaries);
    if (!summaries.length) {
      scores.appendChild(el("p", { className: "sv-empty", text: "No round finished yet." }));
      return;
    }
    var head = el("tr", {}, el("th", { scope: "col", text: "Round" }));
    model.names.forEach(function (name) { head.appendChild(el("th", { scope: "col", text: name })); });
    var body = el("tbody", {});
    summaries.forEach(function (summary, i) {
      var event = summary.event;
      var row = el("tr", { "data-round": String(i) }, el("th", { scope: "row", text: String(isInt(event.round) ? event.round + 1 : i + 1) }));
      model.names.forEach(function (name, seat) {
        var detail = "";
        if (model.family === "bidding" && Array.isArray(event.bids) && Array.isArray(event.tricks)) {
          detail = "bid " + event.bids[seat] + ", won " + event.tricks[seat];
        } else if (model.family === "oh7" && Array.isArray(event.bets) && Array.isArray(event.tricks)) {
          detail = "bet " + event.bets[seat] + ", won " + event.tricks[seat] + (Array.isArray(event.made) && event.made[seat] ? " \u2713" : "");
        } else if (model.family === "black-sevens" && Array.isArray(event.last_cards) && typeof event.last_cards[seat] === "string") {
          detail = "last card " + cardLabel(event.last_cards[seat]);
        }
        var points = summary.points[seat];
        row.appendChild(el("td", {},
          el("span", { className: "sv-points", text: (points > 0 ? "+" : "") + points }),
          el("span", { className: "sv-total", text: " = " + summary.scores[seat] }),
          detail ? el("span", { className: "sv-detail", text: detail }) : null));
      });
      body.appendChild(row);
    });
    scores.appendChild(el("table", { className: "sv-score-table" }, el("thead", {}, head), body));
  };

  // Mounting ----------------------------------------------------------------------------------

  function showError(element, message) {
    if (element.septetViewer) element.septetViewer.destroy();
    element.septetViewer = null;
    clear(element);
    element.classList.remove("sv-ready");
    element.classList.add("septet-viewer", "sv-failed");
    element.appendChild(el("div", { className: "sv-error", role: "alert", "data-role": "error" },
      el("strong", { text: "This replay cannot be shown. " }), el("span", { text: message })));
  }

  /**
   * Shows `replayDocument` (an object, or its JSON text) in `element`; returns the viewer, or
   * null when the document is not a replay this viewer can show (the element then says why).
   * options: {hash: true to read and write #step=N&seat=S, keyboard: "document" | "element",
   * live: true for a match being played (the document may hold no event yet; `append` adds them),
   * onChoose: a function the `prompt` messages given to `append` are offered with}.
   * Mounting again in the same element (a live match's newer document) keeps the moment shown.
   */
  function mount(element, replayDocument, options) {
    options = options || {};
    var previous = element.septetViewer ? element.septetViewer.moment() : null;
    if (element.septetViewer) element.septetViewer.destroy();
    element.septetViewer = null;
    try {
      var doc = typeof replayDocument === "string" ? JSON.parse(replayDocument) : replayDocument;
      var viewer = new Viewer(element, readReplay(doc, Boolean(options.live)), {
        hash: options.hash !== false, keyboard: options.keyboard || "document",
        live: Boolean(options.live), onChoose: options.onChoose
      }, previous);
      element.septetViewer = viewer;
      return viewer;
    } catch (error) {
      showError(element, error instanceof ReplayError || error instanceof SyntaxError ? error.message : "the viewer failed: " + String(error));
      return null;
    }
  }

  /** Fetches the replay named by `data-replay-url` and mounts it. */
  function mountFromUrl(element, options) {
    var url = element.getAttribute("data-replay-url");
    if (!element.septetViewer) { // a viewer being refreshed stays on screen until the new document is in
      clear(element);
      element.appendChild(el("p", { className: "sv-loading", text: "Loading the replay\u2026" }));
    }
    return global.fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new ReplayError("the server answered " + response.status + " for the replay");
        return response.text();
      })
      .then(function (text) { return mount(element, text, options); })
      .catch(function (error) {
        showError(element, error instanceof ReplayError ? error.message : "the replay could not be loaded (" + String(error) + ")");
        return null;
      });
  }

  function autoMount() {
    var found = global.document.querySelectorAll(".septet-viewer[data-replay-url]");
    Array.prototype.forEach.call(found, function (element, i) {
      if (!element.septetViewer) mountFromUrl(element, { hash: i === 0 });
    });
  }

  global.SeptetViewer = {
    mount: mount, mountFromUrl: mountFromUrl, FORMAT: FORMAT,
    read: function (doc) { return readReplay(doc, false).model; }
  };
  if (global.document) {
    if (global.document.readyState === "loading") global.document.addEventListener("DOMContentLoaded", autoMount);
    else autoMount();
  }
})(window);
