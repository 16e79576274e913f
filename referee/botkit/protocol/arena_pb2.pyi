from referee.botkit.protocol import bot_pb2 as _bot_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitBotChunk(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class SubmitBotResponse(_message.Message):
    __slots__ = ("bot", "version", "status", "archive_sha256")
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_SHA256_FIELD_NUMBER: _ClassVar[int]
    bot: str
    version: int
    status: str
    archive_sha256: str
    def __init__(self, bot: _Optional[str] = ..., version: _Optional[int] = ..., status: _Optional[str] = ..., archive_sha256: _Optional[str] = ...) -> None: ...

class ListLaddersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListLaddersResponse(_message.Message):
    __slots__ = ("ladders",)
    LADDERS_FIELD_NUMBER: _ClassVar[int]
    ladders: _containers.RepeatedCompositeFieldContainer[Ladder]
    def __init__(self, ladders: _Optional[_Iterable[_Union[Ladder, _Mapping]]] = ...) -> None: ...

class Ladder(_message.Message):
    __slots__ = ("game", "min_players", "max_players", "decision_seconds", "bank_seconds", "active", "seat_budget_seconds", "max_match_seconds", "pool")
    GAME_FIELD_NUMBER: _ClassVar[int]
    MIN_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    MAX_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECISION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BANK_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    SEAT_BUDGET_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCH_SECONDS_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    game: str
    min_players: int
    max_players: int
    decision_seconds: float
    bank_seconds: float
    active: bool
    seat_budget_seconds: float
    max_match_seconds: float
    pool: str
    def __init__(self, game: _Optional[str] = ..., min_players: _Optional[int] = ..., max_players: _Optional[int] = ..., decision_seconds: _Optional[float] = ..., bank_seconds: _Optional[float] = ..., active: _Optional[bool] = ..., seat_budget_seconds: _Optional[float] = ..., max_match_seconds: _Optional[float] = ..., pool: _Optional[str] = ...) -> None: ...

class GetLadderRequest(_message.Message):
    __slots__ = ("game", "pool")
    GAME_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    game: str
    pool: str
    def __init__(self, game: _Optional[str] = ..., pool: _Optional[str] = ...) -> None: ...

class GetLadderResponse(_message.Message):
    __slots__ = ("ladder", "standings")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    standings: _containers.RepeatedCompositeFieldContainer[Standing]
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ..., standings: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("rank", "bot", "owner", "version", "rating", "low", "high", "games", "last_match", "mu", "sigma")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    LAST_MATCH_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    owner: str
    version: int
    rating: int
    low: int
    high: int
    games: int
    last_match: str
    mu: float
    sigma: float
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., owner: _Optional[str] = ..., version: _Optional[int] = ..., rating: _Optional[int] = ..., low: _Optional[int] = ..., high: _Optional[int] = ..., games: _Optional[int] = ..., last_match: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ("owner",)
    OWNER_FIELD_NUMBER: _ClassVar[int]
    owner: str
    def __init__(self, owner: _Optional[str] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotSummary]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotSummary, _Mapping]]] = ...) -> None: ...

class BotSummary(_message.Message):
    __slots__ = ("name", "owner", "is_house", "latest_version", "latest_status", "created", "self_hosted", "connected", "connected_since", "answer_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    IS_HOUSE_FIELD_NUMBER: _ClassVar[int]
    LATEST_VERSION_FIELD_NUMBER: _ClassVar[int]
    LATEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SELF_HOSTED_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_SINCE_FIELD_NUMBER: _ClassVar[int]
    ANSWER_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    owner: str
    is_house: bool
    latest_version: int
    latest_status: str
    created: str
    self_hosted: bool
    connected: bool
    connected_since: str
    answer_ms: float
    def __init__(self, name: _Optional[str] = ..., owner: _Optional[str] = ..., is_house: _Optional[bool] = ..., latest_version: _Optional[int] = ..., latest_status: _Optional[str] = ..., created: _Optional[str] = ..., self_hosted: _Optional[bool] = ..., connected: _Optional[bool] = ..., connected_since: _Optional[str] = ..., answer_ms: _Optional[float] = ...) -> None: ...

class GetBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetBotResponse(_message.Message):
    __slots__ = ("bot", "versions")
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    bot: BotSummary
    versions: _containers.RepeatedCompositeFieldContainer[BotVersionInfo]
    def __init__(self, bot: _Optional[_Union[BotSummary, _Mapping]] = ..., versions: _Optional[_Iterable[_Union[BotVersionInfo, _Mapping]]] = ...) -> None: ...

class BotVersionInfo(_message.Message):
    __slots__ = ("number", "status", "archive_sha256", "games", "created", "qualified", "error_log", "progress", "reported_name", "archive_pruned")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_SHA256_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    QUALIFIED_FIELD_NUMBER: _ClassVar[int]
    ERROR_LOG_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    REPORTED_NAME_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_PRUNED_FIELD_NUMBER: _ClassVar[int]
    number: int
    status: str
    archive_sha256: str
    games: _containers.RepeatedScalarFieldContainer[str]
    created: str
    qualified: str
    error_log: str
    progress: QualificationProgress
    reported_name: str
    archive_pruned: bool
    def __init__(self, number: _Optional[int] = ..., status: _Optional[str] = ..., archive_sha256: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., created: _Optional[str] = ..., qualified: _Optional[str] = ..., error_log: _Optional[str] = ..., progress: _Optional[_Union[QualificationProgress, _Mapping]] = ..., reported_name: _Optional[str] = ..., archive_pruned: _Optional[bool] = ...) -> None: ...

class QualificationProgress(_message.Message):
    __slots__ = ("step", "games", "games_over", "game", "games_failed")
    STEP_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    GAMES_OVER_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    GAMES_FAILED_FIELD_NUMBER: _ClassVar[int]
    step: str
    games: _containers.RepeatedScalarFieldContainer[str]
    games_over: int
    game: str
    games_failed: int
    def __init__(self, step: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., games_over: _Optional[int] = ..., game: _Optional[str] = ..., games_failed: _Optional[int] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("bot", "game", "page_size", "page_token", "status")
    BOT_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    game: str
    page_size: int
    page_token: str
    status: str
    def __init__(self, bot: _Optional[str] = ..., game: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    next_page_token: str
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("id", "game", "kind", "rated", "status", "seed", "duplicate_set", "rotation", "created", "started", "finished", "seats", "has_replay")
    ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_SET_FIELD_NUMBER: _ClassVar[int]
    ROTATION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    HAS_REPLAY_FIELD_NUMBER: _ClassVar[int]
    id: int
    game: str
    kind: str
    rated: bool
    status: str
    seed: int
    duplicate_set: str
    rotation: int
    created: str
    started: str
    finished: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    has_replay: bool
    def __init__(self, id: _Optional[int] = ..., game: _Optional[str] = ..., kind: _Optional[str] = ..., rated: _Optional[bool] = ..., status: _Optional[str] = ..., seed: _Optional[int] = ..., duplicate_set: _Optional[str] = ..., rotation: _Optional[int] = ..., created: _Optional[str] = ..., started: _Optional[str] = ..., finished: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., has_replay: _Optional[bool] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "bot", "version", "score", "rank", "forfeit_status", "forfeit_reason", "rating_change", "person")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_STATUS_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_REASON_FIELD_NUMBER: _ClassVar[int]
    RATING_CHANGE_FIELD_NUMBER: _ClassVar[int]
    PERSON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot: str
    version: int
    score: int
    rank: int
    forfeit_status: str
    forfeit_reason: str
    rating_change: int
    person: bool
    def __init__(self, seat: _Optional[int] = ..., bot: _Optional[str] = ..., version: _Optional[int] = ..., score: _Optional[int] = ..., rank: _Optional[int] = ..., forfeit_status: _Optional[str] = ..., forfeit_reason: _Optional[str] = ..., rating_change: _Optional[int] = ..., person: _Optional[bool] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class ReplayChunk(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class ChallengeSeat(_message.Message):
    __slots__ = ("bot", "version")
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    bot: str
    version: int
    def __init__(self, bot: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class RequestChallengeRequest(_message.Message):
    __slots__ = ("game", "seats", "seed", "sets")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    game: str
    seats: _containers.RepeatedCompositeFieldContainer[ChallengeSeat]
    seed: int
    sets: int
    def __init__(self, game: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[ChallengeSeat, _Mapping]]] = ..., seed: _Optional[int] = ..., sets: _Optional[int] = ...) -> None: ...

class RequestChallengeResponse(_message.Message):
    __slots__ = ("match", "challenge_id", "match_ids")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    challenge_id: int
    match_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ..., challenge_id: _Optional[int] = ..., match_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class GetChallengeRequest(_message.Message):
    __slots__ = ("challenge_id",)
    CHALLENGE_ID_FIELD_NUMBER: _ClassVar[int]
    challenge_id: int
    def __init__(self, challenge_id: _Optional[int] = ...) -> None: ...

class MeanInterval(_message.Message):
    __slots__ = ("mean", "low", "high", "n")
    MEAN_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    mean: float
    low: float
    high: float
    n: int
    def __init__(self, mean: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ..., n: _Optional[int] = ...) -> None: ...

class ChallengeBotResult(_message.Message):
    __slots__ = ("bot", "version", "rank", "score", "rank_difference", "forfeits")
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANK_DIFFERENCE_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    version: int
    rank: MeanInterval
    score: MeanInterval
    rank_difference: MeanInterval
    forfeits: int
    def __init__(self, bot: _Optional[str] = ..., version: _Optional[int] = ..., rank: _Optional[_Union[MeanInterval, _Mapping]] = ..., score: _Optional[_Union[MeanInterval, _Mapping]] = ..., rank_difference: _Optional[_Union[MeanInterval, _Mapping]] = ..., forfeits: _Optional[int] = ...) -> None: ...

class ChallengeInfo(_message.Message):
    __slots__ = ("id", "game", "requester", "challenger", "sets", "sets_over", "created", "results", "matches")
    ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    REQUESTER_FIELD_NUMBER: _ClassVar[int]
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    SETS_OVER_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    id: int
    game: str
    requester: str
    challenger: str
    sets: int
    sets_over: int
    created: str
    results: _containers.RepeatedCompositeFieldContainer[ChallengeBotResult]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    def __init__(self, id: _Optional[int] = ..., game: _Optional[str] = ..., requester: _Optional[str] = ..., challenger: _Optional[str] = ..., sets: _Optional[int] = ..., sets_over: _Optional[int] = ..., created: _Optional[str] = ..., results: _Optional[_Iterable[_Union[ChallengeBotResult, _Mapping]]] = ..., matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ...) -> None: ...

class SetChallengesAcceptedRequest(_message.Message):
    __slots__ = ("bot", "accepts")
    BOT_FIELD_NUMBER: _ClassVar[int]
    ACCEPTS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    accepts: bool
    def __init__(self, bot: _Optional[str] = ..., accepts: _Optional[bool] = ...) -> None: ...

class SetChallengesAcceptedResponse(_message.Message):
    __slots__ = ("bot", "accepts")
    BOT_FIELD_NUMBER: _ClassVar[int]
    ACCEPTS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    accepts: bool
    def __init__(self, bot: _Optional[str] = ..., accepts: _Optional[bool] = ...) -> None: ...

class FollowMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("status", "attempt", "match", "live_batch")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    LIVE_BATCH_FIELD_NUMBER: _ClassVar[int]
    status: str
    attempt: int
    match: MatchInfo
    live_batch: str
    def __init__(self, status: _Optional[str] = ..., attempt: _Optional[int] = ..., match: _Optional[_Union[MatchInfo, _Mapping]] = ..., live_batch: _Optional[str] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments",)
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[TournamentSummary]
    def __init__(self, tournaments: _Optional[_Iterable[_Union[TournamentSummary, _Mapping]]] = ...) -> None: ...

class TournamentSummary(_message.Message):
    __slots__ = ("name", "title", "game", "format", "table_size", "duplicate_sets", "rounds", "decision_seconds", "bank_seconds", "entry_deadline", "entry", "status", "entrants")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    TABLE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_SETS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    DECISION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BANK_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ENTRY_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    title: str
    game: str
    format: str
    table_size: int
    duplicate_sets: int
    rounds: int
    decision_seconds: float
    bank_seconds: float
    entry_deadline: str
    entry: str
    status: str
    entrants: int
    def __init__(self, name: _Optional[str] = ..., title: _Optional[str] = ..., game: _Optional[str] = ..., format: _Optional[str] = ..., table_size: _Optional[int] = ..., duplicate_sets: _Optional[int] = ..., rounds: _Optional[int] = ..., decision_seconds: _Optional[float] = ..., bank_seconds: _Optional[float] = ..., entry_deadline: _Optional[str] = ..., entry: _Optional[str] = ..., status: _Optional[str] = ..., entrants: _Optional[int] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetTournamentResponse(_message.Message):
    __slots__ = ("tournament", "entrants", "progress", "standings", "problem")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentSummary
    entrants: _containers.RepeatedCompositeFieldContainer[TournamentEntrant]
    progress: TournamentProgress
    standings: _containers.RepeatedCompositeFieldContainer[TournamentStanding]
    problem: str
    def __init__(self, tournament: _Optional[_Union[TournamentSummary, _Mapping]] = ..., entrants: _Optional[_Iterable[_Union[TournamentEntrant, _Mapping]]] = ..., progress: _Optional[_Union[TournamentProgress, _Mapping]] = ..., standings: _Optional[_Iterable[_Union[TournamentStanding, _Mapping]]] = ..., problem: _Optional[str] = ...) -> None: ...

class TournamentEntrant(_message.Message):
    __slots__ = ("bot", "owner", "version")
    BOT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    bot: str
    owner: str
    version: int
    def __init__(self, bot: _Optional[str] = ..., owner: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class TournamentProgress(_message.Message):
    __slots__ = ("done", "scheduled", "total", "current_round", "seconds_left")
    DONE_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ROUND_FIELD_NUMBER: _ClassVar[int]
    SECONDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    done: int
    scheduled: int
    total: int
    current_round: int
    seconds_left: float
    def __init__(self, done: _Optional[int] = ..., scheduled: _Optional[int] = ..., total: _Optional[int] = ..., current_round: _Optional[int] = ..., seconds_left: _Optional[float] = ...) -> None: ...

class TournamentStanding(_message.Message):
    __slots__ = ("place", "bot", "version", "mean_rank", "low", "high", "sets", "games", "tied_with")
    PLACE_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MEAN_RANK_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    TIED_WITH_FIELD_NUMBER: _ClassVar[int]
    place: int
    bot: str
    version: int
    mean_rank: float
    low: float
    high: float
    sets: int
    games: int
    tied_with: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, place: _Optional[int] = ..., bot: _Optional[str] = ..., version: _Optional[int] = ..., mean_rank: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ..., sets: _Optional[int] = ..., games: _Optional[int] = ..., tied_with: _Optional[_Iterable[str]] = ...) -> None: ...

class EnterTournamentRequest(_message.Message):
    __slots__ = ("name", "bot")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    name: str
    bot: str
    def __init__(self, name: _Optional[str] = ..., bot: _Optional[str] = ...) -> None: ...

class EnterTournamentResponse(_message.Message):
    __slots__ = ("tournament", "bot")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentSummary
    bot: str
    def __init__(self, tournament: _Optional[_Union[TournamentSummary, _Mapping]] = ..., bot: _Optional[str] = ...) -> None: ...

class GetMatchLogsRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class SeatLog(_message.Message):
    __slots__ = ("seat", "bot", "version", "forfeit_status", "forfeit_reason", "forfeit_event", "output", "truncated")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_STATUS_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_REASON_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_EVENT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot: str
    version: int
    forfeit_status: str
    forfeit_reason: str
    forfeit_event: int
    output: str
    truncated: bool
    def __init__(self, seat: _Optional[int] = ..., bot: _Optional[str] = ..., version: _Optional[int] = ..., forfeit_status: _Optional[str] = ..., forfeit_reason: _Optional[str] = ..., forfeit_event: _Optional[int] = ..., output: _Optional[str] = ..., truncated: _Optional[bool] = ...) -> None: ...

class GetMatchLogsResponse(_message.Message):
    __slots__ = ("match_id", "seats")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatLog]
    def __init__(self, match_id: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatLog, _Mapping]]] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ("seat", "answer")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    seat: str
    answer: _bot_pb2.PlayResponse
    def __init__(self, seat: _Optional[str] = ..., answer: _Optional[_Union[_bot_pb2.PlayResponse, _Mapping]] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("attached", "request", "refused")
    ATTACHED_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    attached: ConnectAttached
    request: SeatRequest
    refused: ConnectRefused
    def __init__(self, attached: _Optional[_Union[ConnectAttached, _Mapping]] = ..., request: _Optional[_Union[SeatRequest, _Mapping]] = ..., refused: _Optional[_Union[ConnectRefused, _Mapping]] = ...) -> None: ...

class ConnectAttached(_message.Message):
    __slots__ = ("bot", "connection")
    BOT_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_FIELD_NUMBER: _ClassVar[int]
    bot: str
    connection: str
    def __init__(self, bot: _Optional[str] = ..., connection: _Optional[str] = ...) -> None: ...

class SeatRequest(_message.Message):
    __slots__ = ("seat", "request")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    seat: str
    request: _bot_pb2.PlayRequest
    def __init__(self, seat: _Optional[str] = ..., request: _Optional[_Union[_bot_pb2.PlayRequest, _Mapping]] = ...) -> None: ...

class ConnectRefused(_message.Message):
    __slots__ = ("seat", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: str
    reason: str
    def __init__(self, seat: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
