from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_BET: _ClassVar[DecisionKind]
    DECISION_KIND_BID: _ClassVar[DecisionKind]
    DECISION_KIND_REVEAL: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_BET: DecisionKind
DECISION_KIND_BID: DecisionKind
DECISION_KIND_REVEAL: DecisionKind
DECISION_KIND_PLAY: DecisionKind

class PlayRequest(_message.Message):
    __slots__ = ("start", "decide", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    DECIDE_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: StartMatchRequest
    decide: DecideRequest
    end: EndMatchRequest
    def __init__(self, start: _Optional[_Union[StartMatchRequest, _Mapping]] = ..., decide: _Optional[_Union[DecideRequest, _Mapping]] = ..., end: _Optional[_Union[EndMatchRequest, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("started", "decision", "ended")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    started: StartMatchResponse
    decision: DecideResponse
    ended: EndMatchResponse
    def __init__(self, started: _Optional[_Union[StartMatchResponse, _Mapping]] = ..., decision: _Optional[_Union[DecideResponse, _Mapping]] = ..., ended: _Optional[_Union[EndMatchResponse, _Mapping]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("bid", "card", "reveal", "cards")
    BID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    bid: int
    card: str
    reveal: bool
    cards: CardList
    def __init__(self, bid: _Optional[int] = ..., card: _Optional[str] = ..., reveal: _Optional[bool] = ..., cards: _Optional[_Union[CardList, _Mapping]] = ...) -> None: ...

class CardList(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("plays", "winner")
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[Play]
    winner: int
    def __init__(self, plays: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_decision_ms", "bank_ms")
    PER_DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    per_decision_ms: int
    bank_ms: int
    def __init__(self, per_decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class StartMatchRequest(_message.Message):
    __slots__ = ("match_id", "game", "seat", "num_players", "options", "seat_names", "time_control")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    seat: int
    num_players: int
    options: _containers.ScalarMap[str, int]
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    time_control: TimeControl
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., options: _Optional[_Mapping[str, int]] = ..., seat_names: _Optional[_Iterable[str]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class StartMatchResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DecideRequest(_message.Message):
    __slots__ = ("match_id", "seat", "game", "kind", "oh7", "bidding", "black_sevens", "legal_actions", "decision_time_ms", "bank_time_ms", "kept_tricks", "changed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OH7_FIELD_NUMBER: _ClassVar[int]
    BIDDING_FIELD_NUMBER: _ClassVar[int]
    BLACK_SEVENS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    KEPT_TRICKS_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    game: str
    kind: DecisionKind
    oh7: Oh7InfoState
    bidding: BiddingInfoState
    black_sevens: BlackSevensInfoState
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    decision_time_ms: int
    bank_time_ms: int
    kept_tricks: int
    changed: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., game: _Optional[str] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., oh7: _Optional[_Union[Oh7InfoState, _Mapping]] = ..., bidding: _Optional[_Union[BiddingInfoState, _Mapping]] = ..., black_sevens: _Optional[_Union[BlackSevensInfoState, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., decision_time_ms: _Optional[int] = ..., bank_time_ms: _Optional[int] = ..., kept_tricks: _Optional[int] = ..., changed: _Optional[_Iterable[str]] = ...) -> None: ...

class DecideResponse(_message.Message):
    __slots__ = ("index", "action")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    index: int
    action: Action
    def __init__(self, index: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class EndMatchRequest(_message.Message):
    __slots__ = ("match_id", "scores", "ranks", "aborted", "forfeits")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    ABORTED_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    aborted: bool
    forfeits: _containers.RepeatedCompositeFieldContainer[Forfeit]
    def __init__(self, match_id: _Optional[str] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., aborted: _Optional[bool] = ..., forfeits: _Optional[_Iterable[_Union[Forfeit, _Mapping]]] = ...) -> None: ...

class Forfeit(_message.Message):
    __slots__ = ("seat", "status", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    status: str
    reason: str
    def __init__(self, seat: _Optional[int] = ..., status: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class EndMatchResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Oh7InfoState(_message.Message):
    __slots__ = ("game", "seat", "num_players", "num_seats", "dummy", "options", "target", "scores", "bets_made", "round", "redeals", "hand_size", "phase", "bet_cards", "attempt", "bets", "revealer", "first_leader", "trump", "dummy_up", "leader", "lead_suit", "trick", "tricks", "tricks_won", "hand")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    NUM_SEATS_FIELD_NUMBER: _ClassVar[int]
    DUMMY_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    BETS_MADE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    REDEALS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    BET_CARDS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    BETS_FIELD_NUMBER: _ClassVar[int]
    REVEALER_FIELD_NUMBER: _ClassVar[int]
    FIRST_LEADER_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    DUMMY_UP_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LEAD_SUIT_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    num_players: int
    num_seats: int
    dummy: int
    options: _containers.ScalarMap[str, int]
    target: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    bets_made: _containers.RepeatedScalarFieldContainer[int]
    round: int
    redeals: int
    hand_size: int
    phase: str
    bet_cards: _containers.RepeatedCompositeFieldContainer[CardList]
    attempt: int
    bets: _containers.RepeatedScalarFieldContainer[int]
    revealer: int
    first_leader: int
    trump: str
    dummy_up: _containers.RepeatedScalarFieldContainer[str]
    leader: int
    lead_suit: str
    trick: _containers.RepeatedCompositeFieldContainer[Play]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    hand: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., num_seats: _Optional[int] = ..., dummy: _Optional[int] = ..., options: _Optional[_Mapping[str, int]] = ..., target: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., bets_made: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., redeals: _Optional[int] = ..., hand_size: _Optional[int] = ..., phase: _Optional[str] = ..., bet_cards: _Optional[_Iterable[_Union[CardList, _Mapping]]] = ..., attempt: _Optional[int] = ..., bets: _Optional[_Iterable[int]] = ..., revealer: _Optional[int] = ..., first_leader: _Optional[int] = ..., trump: _Optional[str] = ..., dummy_up: _Optional[_Iterable[str]] = ..., leader: _Optional[int] = ..., lead_suit: _Optional[str] = ..., trick: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., hand: _Optional[_Iterable[str]] = ...) -> None: ...

class BiddingInfoState(_message.Message):
    __slots__ = ("game", "seat", "num_players", "options", "scores", "round", "rounds", "hand_size", "dealer", "trump_card", "trump", "hand", "visible_cards", "bids", "leader", "trick", "tricks", "tricks_won")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TRUMP_CARD_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_CARDS_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    num_players: int
    options: _containers.ScalarMap[str, int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    round: int
    rounds: int
    hand_size: int
    dealer: int
    trump_card: str
    trump: str
    hand: _containers.RepeatedScalarFieldContainer[str]
    visible_cards: _containers.RepeatedCompositeFieldContainer[Play]
    bids: _containers.RepeatedScalarFieldContainer[int]
    leader: int
    trick: _containers.RepeatedCompositeFieldContainer[Play]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., options: _Optional[_Mapping[str, int]] = ..., scores: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., hand_size: _Optional[int] = ..., dealer: _Optional[int] = ..., trump_card: _Optional[str] = ..., trump: _Optional[str] = ..., hand: _Optional[_Iterable[str]] = ..., visible_cards: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., bids: _Optional[_Iterable[int]] = ..., leader: _Optional[int] = ..., trick: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ...) -> None: ...

class BlackSevensInfoState(_message.Message):
    __slots__ = ("game", "seat", "num_players", "options", "scores", "table", "round_index", "round_leader", "history", "hands_won", "played", "leader", "hand_size", "set_size", "standing", "standing_seat", "plays", "hand")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    ROUND_INDEX_FIELD_NUMBER: _ClassVar[int]
    ROUND_LEADER_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    HANDS_WON_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    SET_SIZE_FIELD_NUMBER: _ClassVar[int]
    STANDING_FIELD_NUMBER: _ClassVar[int]
    STANDING_SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    num_players: int
    options: _containers.ScalarMap[str, int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    table: _containers.RepeatedCompositeFieldContainer[CardList]
    round_index: int
    round_leader: int
    history: _containers.RepeatedCompositeFieldContainer[BlackSevensHand]
    hands_won: _containers.RepeatedScalarFieldContainer[int]
    played: _containers.RepeatedCompositeFieldContainer[CardList]
    leader: int
    hand_size: int
    set_size: int
    standing: _containers.RepeatedScalarFieldContainer[str]
    standing_seat: int
    plays: _containers.RepeatedCompositeFieldContainer[SetPlay]
    hand: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., num_players: _Optional[int] = ..., options: _Optional[_Mapping[str, int]] = ..., scores: _Optional[_Iterable[int]] = ..., table: _Optional[_Iterable[_Union[CardList, _Mapping]]] = ..., round_index: _Optional[int] = ..., round_leader: _Optional[int] = ..., history: _Optional[_Iterable[_Union[BlackSevensHand, _Mapping]]] = ..., hands_won: _Optional[_Iterable[int]] = ..., played: _Optional[_Iterable[_Union[CardList, _Mapping]]] = ..., leader: _Optional[int] = ..., hand_size: _Optional[int] = ..., set_size: _Optional[int] = ..., standing: _Optional[_Iterable[str]] = ..., standing_seat: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[SetPlay, _Mapping]]] = ..., hand: _Optional[_Iterable[str]] = ...) -> None: ...

class SetPlay(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class BlackSevensHand(_message.Message):
    __slots__ = ("winner", "plays")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    winner: int
    plays: _containers.RepeatedCompositeFieldContainer[SetPlay]
    def __init__(self, winner: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[SetPlay, _Mapping]]] = ...) -> None: ...
