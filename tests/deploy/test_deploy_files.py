"""The files under deploy/ parse, agree with each other, and run only what the project really has.

Every command a container, pod or unit runs is checked against the real entry points: gunicorn's
own option parser and worker class loader, uvicorn's own loading of the ASGI application, `django-admin`
subcommands with their own argument parsers, Celery's app and the queue names the settings route
tasks to. Every environment variable they set
is one the settings (or a bot runtime) actually read. And a wheel built as the image builds it
carries the templates and static files the site serves.
"""

from __future__ import annotations

import configparser
import contextlib
import functools
import importlib
import importlib.util
import inspect
import io
import re
import shlex
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
SYSTEMD = DEPLOY / "systemd"
VENV_BIN = "/opt/septet/.venv/bin/"
SITE_APPLICATION = "septet_platform.asgi:application"
SITE_WORKER_CLASS = "septet_platform.asgi_worker.SiteWorker"


def _env_names_read_by_the_project() -> set[str]:
    """Names the settings read with os.environ, plus what the runtimes themselves read."""
    names = {"DJANGO_SETTINGS_MODULE", "PYTHONUNBUFFERED"}
    pattern = re.compile(r"os\.environ(?:\.get)?[\[(]\s*\"([A-Z_]+)\"")
    sources = [*(ROOT / "platform" / "septet_platform" / "settings").glob("*.py")]
    sources.append(ROOT / "platform" / "septet_platform" / "asgi.py")  # SEPTET_WEB_THREADS
    for path in sources:
        names |= set(pattern.findall(path.read_text()))
    if "SEPTET_PROTOS" in (ROOT / "bots" / "examples" / "node-random" / "bot.js").read_text():
        names.add("SEPTET_PROTOS")  # where the Node.js example reads the protos at run time
    return names


ENV_NAMES = _env_names_read_by_the_project()


def check_command(argv: list[str]) -> str:
    """Fails unless `argv` runs a real entry point with options it accepts; returns its role."""
    if argv[:2] == ["sh", "-c"]:
        roles = [check_command(shlex.split(part)) for part in argv[2].split("&&")]
        return "+".join(roles)
    program = argv[0].removeprefix(VENV_BIN)
    if program == "gunicorn":
        _check_site(argv[1:])
        return "web"
    if program == "django-admin":
        name, options = argv[1], argv[2:]
        commands = get_commands()
        assert name in commands, f"django-admin has no command {name!r}"
        load_command_class(commands[name], name).create_parser("django-admin", name).parse_args(options)
        return {"arena": "grpc", "migrate": "migrate", "ladders_ensure": "ladders"}.get(name, name)
    if program == "celery":
        assert argv[1:3] == ["-A", "septet_platform"], argv
        assert importlib.util.find_spec("septet_platform.celery"), "the Celery app module exists"
        role = argv[3]
        assert role in ("worker", "beat"), argv
        if role == "worker":
            queues = argv[argv.index("-Q") + 1].split(",")
            assert set(queues) <= set(settings.SEPTET_QUEUES), f"unknown queues {queues}"
            return "worker:" + ",".join(sorted(queues))
        return "beat"
    if program == "python" and argv[1] == "-c":
        compile(argv[2], "<healthcheck>", "exec")
        return "probe"
    if program == "septet" and argv[1] == "worker":
        return _check_septet_worker(argv[2:])
    raise AssertionError(f"{argv[0]} is not one of the project's entry points")


@functools.cache
def _septet_worker_options() -> frozenset[str]:
    """The options `septet worker --help` lists, asked of the command pyproject.toml installs (as
    `septet` itself runs it: the entry point's function with the words after `worker`)."""
    commands = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][
        "septet.commands"
    ]
    assert "worker" in commands, "deploy/ runs `septet worker`: pyproject.toml must install it"
    module, _, attribute = commands["worker"].partition(":")
    command = getattr(importlib.import_module(module), attribute)
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit) as stopped:
        command(["--help"])
    assert stopped.value.code == 0, shown.getvalue()
    return frozenset(re.findall(r"(--[a-z][a-z-]*)", shown.getvalue()))


def _check_septet_worker(args: list[str]) -> str:
    """`septet worker` as deploy/ runs it: options the command has, production settings and pool,
    the database store, and the queues named (what it consumes is the role)."""
    used = {word for word in args if word.startswith("--")}
    assert used <= _septet_worker_options(), f"septet worker has no {sorted(used - _septet_worker_options())}"
    assert "--production" in args, "production settings and a prefork pool, as deploy/ runs it"
    assert not {"--broker", "--database"} & used, (
        "URLs with passwords from the environment, not the command line"
    )
    assert _celery_option(args, "--storage") == "database"
    assert int(_celery_option(args, "--concurrency")) >= 1
    queues = _celery_option(args, "--queues").split(",")
    assert set(queues) <= set(settings.SEPTET_QUEUES), f"unknown queues {queues}"
    return "worker:" + ",".join(sorted(queues))


def _consumed_queues(argv: list[str]) -> set[str] | None:
    """The queues a command takes work from (a Celery worker's -Q, `septet worker`'s --queues);
    None for a command that consumes none."""
    if argv[1:4] == ["-A", "septet_platform", "worker"]:
        return set(_celery_option(argv, "-Q").split(","))
    if argv[0].endswith("septet") and argv[1] == "worker":
        return set(_celery_option(argv, "--queues").split(","))
    return None


def _check_site(args: list[str]) -> None:
    """The site's command: gunicorn's options as gunicorn reads them, its worker class loaded as
    gunicorn loads it (uvicorn's, the site's own), and the application loaded by uvicorn itself with
    that worker's configuration, which must find an ASGI 3 application (live streams are a
    coroutine per viewer; a WSGI app would hold a thread per viewer)."""
    import uvicorn
    from gunicorn.config import Config
    from uvicorn_worker import UvicornWorker

    config = Config()
    parsed = config.parser().parse_args(args)
    for name, value in vars(parsed).items():  # as gunicorn's own Application.load_config does
        if name != "args" and value is not None:
            config.set(name.lower(), value)
    assert parsed.args == [SITE_APPLICATION], f"the site runs {SITE_APPLICATION}, not {parsed.args}"
    assert config.settings["worker_class"].get() == SITE_WORKER_CLASS, "uvicorn, with the site's stop"
    assert parsed.threads is None, "pages take SEPTET_WEB_THREADS threads inside the app, not --threads"
    worker_class = config.worker_class
    assert issubclass(worker_class, UvicornWorker), worker_class
    loaded = uvicorn.Config(SITE_APPLICATION, log_config=None, **worker_class.CONFIG_KWARGS)
    loaded.load()
    assert loaded.interface == "asgi3", loaded.interface
    module, _, attribute = SITE_APPLICATION.partition(":")
    assert inspect.iscoroutinefunction(getattr(importlib.import_module(module), attribute))


def _celery_option(argv: list[str], *names: str) -> str:
    """The value of a `celery worker` (or `septet worker`) option given as `NAME VALUE`."""
    for index, word in enumerate(argv):
        if word in names:
            return argv[index + 1]
    raise AssertionError(f"no {names[0]} in {argv}")


def _kubernetes_documents() -> list[dict[str, Any]]:
    documents = []
    for path in sorted(KUBERNETES.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            documents += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return documents


def _roles_of_a_whole_installation() -> dict[str, str]:
    """Each role an installation runs, by the name compose and the README give it; the worker,
    the builder and the tables worker between them consume every queue the settings route tasks to
    (a queue nobody consumes is never played), the builder the builds alone (a build never holds a
    match slot), the tables worker the tables alone (a person's long game never holds one either)."""
    return {
        "migrate": "migrate+ladders",
        "web": "web",
        "grpc": "grpc",
        "worker": "worker:" + ",".join(sorted(settings.SEPTET_MATCH_QUEUES)),
        "builder": "worker:" + settings.SEPTET_BUILD_QUEUE,
        "tables": "worker:" + settings.SEPTET_TABLE_QUEUE,
        "beat": "beat",
    }


def _readme_roles() -> dict[str, list[list[str]]]:
    """The README's role table: each role's command, split at `&&`."""
    rows = re.findall(r"^\| (\w+) \| `([^`]+)` \|", (DEPLOY / "README.md").read_text(), re.M)
    return {name: [shlex.split(part) for part in command.split("&&")] for name, command in rows}


def _commands_of_every_form() -> dict[str, dict[str, list[str]]]:
    """Every long-running command deploy/ runs, by form and by the name it has there."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    lines = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
    cmd = [line.split(maxsplit=1)[1] for line in lines if line.startswith("CMD ")]
    return {
        "compose": {name: service["command"] for name, service in compose.items() if "build" in service},
        "kubernetes": {
            doc["metadata"]["name"]: container["command"]
            for doc in _kubernetes_documents()
            if doc["kind"] == "Deployment"
            for container in doc["spec"]["template"]["spec"]["containers"]
        },
        "systemd": {
            path.name: shlex.split(_unit(path)["Service"]["ExecStart"])
            for path in sorted(SYSTEMD.glob("*.service"))
        },
        "Dockerfile": {"CMD": yaml.safe_load(cmd[0])},
        "README": {name: parts[0] for name, parts in _readme_roles().items() if len(parts) == 1},
    }


def _where(form: str, role: str) -> str:
    """The name `role` has in `form`."""
    return {
        "compose": role,
        "kubernetes": f"septet-{role}",
        "systemd": {"worker": "septet-worker@.service", "grpc": "septet-arena.service"}.get(
            role, f"septet-{role}.service"
        ),
        "Dockerfile": "CMD",
        "README": role,
    }[form]


# Compose -----------------------------------------------------------------------------------------


def test_compose_runs_every_role_once_with_real_commands_and_known_settings() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    roles = {
        name: check_command(service["command"]) for name, service in services.items() if "build" in service
    }

    assert set(services) == {"postgres", "redis", *_roles_of_a_whole_installation()}
    assert roles == _roles_of_a_whole_installation()
    assert services["beat"]["deploy"]["replicas"] == 1
    for name, service in services.items():
        if "build" in service:
            assert set(service["environment"]) <= ENV_NAMES, name
            assert service["build"]["dockerfile"] == "deploy/Dockerfile"
            assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
    assert services["web"]["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?"), "no default secret"
    for name in _roles_of_a_whole_installation():
        assert services[name]["environment"]["SEPTET_STORAGE"] == "database", name
    assert "SYS_ADMIN" in services["worker"]["cap_add"], "the sandbox needs namespaces in the worker"
    assert "SYS_ADMIN" in services["builder"]["cap_add"], "and in the builder"
    assert "SYS_ADMIN" in services["tables"]["cap_add"], "and in the tables worker (its bots are sandboxed)"


def test_compose_has_no_fixed_password_and_redis_requires_one() -> None:
    """Passwords come from deploy/.env (compose refuses to start without them), never from the
    file itself; Redis takes its password on standard input and every client URL carries it."""
    text = (DEPLOY / "compose.yaml").read_text()
    compose = yaml.safe_load(text)
    services = compose["services"]
    env = services["web"]["environment"]

    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    assert "${POSTGRES_PASSWORD:?" in env["DATABASE_URL"] and "septet:septet@" not in text
    assert env["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD:?")
    redis = services["redis"]
    assert redis["environment"]["REDIS_PASSWORD"].startswith("${REDIS_PASSWORD:?")
    script = redis["command"][2]
    assert "requirepass" in script and script.endswith("| redis-server -"), "password on stdin"
    assert "--requirepass" not in script, "never on a command line others can read"
    assert "REDISCLI_AUTH" in redis["healthcheck"]["test"][1]
    readme = (DEPLOY / "README.md").read_text()
    for name in ("SECRET_KEY", "POSTGRES_PASSWORD", "REDIS_PASSWORD"):
        assert name in readme.split("## 1. Docker Compose")[1].split("## 2.")[0], name
    assert "/deploy/.env" in (ROOT / ".gitignore").read_text().split()


def test_the_readme_role_table_runs_the_same_commands_as_the_compose_file() -> None:
    """An organiser copies these commands by hand: each must be a real entry point."""
    roles = {name: "+".join(check_command(part) for part in parts) for name, parts in _readme_roles().items()}

    assert roles == _roles_of_a_whole_installation()


def test_no_volume_is_shared_between_services_or_replicas() -> None:
    """Archives and replays are in the database: no service needs another's folder, so a worker can
    run anywhere. A volume is one service's own (beat's schedule), never under a service that
    runs several replicas (they would share it), never a folder of the host."""
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    mounted_by: dict[str, list[str]] = {}
    for name, service in services.items():
        for mount in service.get("volumes", []):
            source = mount.split(":", 1)[0]
            assert not source.startswith((".", "/", "~")), f"{name} mounts a folder of the host: {mount}"
            mounted_by.setdefault(source, []).append(name)
            assert service.get("deploy", {}).get("replicas", 1) == 1, (
                f"{name}'s replicas would share {source}"
            )
    shared = {volume: names for volume, names in mounted_by.items() if len(names) > 1}

    assert shared == {}, "mounted by more than one service"
    assert set(mounted_by) == {"postgres-data", "redis-data", "beat-schedule"}


def test_workers_start_with_septet_worker_and_never_hold_the_site_secret_key() -> None:
    """In every form the match workers and the builder are `septet worker` (it checks the centre and
    the sandbox, then supervises Celery), reach the centre with its URLs alone, and are never given
    SECRET_KEY: a compromised worker cannot sign a session (deploy/README.md, the threat model)."""
    commands = _commands_of_every_form()
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    documents = _kubernetes_documents()
    secrets = {doc["metadata"]["name"]: doc["stringData"] for doc in documents if doc["kind"] == "Secret"}
    pods = {
        doc["metadata"]["name"]: doc["spec"]["template"]["spec"]
        for doc in documents
        if doc["kind"] == "Deployment"
    }

    for form in ("compose", "kubernetes", "systemd", "README"):
        for role in ("worker", "builder"):
            argv = commands[form][_where(form, role)]
            assert Path(argv[0]).name == "septet" and argv[1] == "worker", f"{form} {role}: {argv}"
    for role in ("worker", "builder"):
        environment = compose[role]["environment"]
        assert set(environment) == {"DATABASE_URL", "REDIS_URL", "SEPTET_STORAGE"}, role
        reachable: set[str] = set()
        for container in pods[f"septet-{role}"]["containers"]:
            for source in container["envFrom"]:
                if "secretRef" in source:
                    reachable |= set(secrets[source["secretRef"]["name"]])
        assert {"DATABASE_URL", "REDIS_URL"} <= reachable and "SECRET_KEY" not in reachable, role
    assert "SECRET_KEY" in compose["web"]["environment"], "the site signs sessions with it"


# Dockerfile --------------------------------------------------------------------------------------


def test_the_dockerfile_copies_what_exists_and_runs_a_real_entry_point() -> None:
    lines = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
    instructions = [line.split(maxsplit=1) for line in lines if line.strip() and not line.startswith("#")]
    by_kind: dict[str, list[str]] = {}
    for kind, rest in instructions:
        by_kind.setdefault(kind, []).append(rest)

    assert by_kind["FROM"] == ["python:3.11-slim-bookworm"]
    for copied in by_kind["COPY"]:
        *sources, _ = copied.split()
        assert all((ROOT / source).exists() for source in sources), copied
    assert any("bubblewrap" in run for run in by_kind["RUN"])
    assert any("pip install --no-cache-dir ." in run for run in by_kind["RUN"])
    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(by_kind["ENV"])))
    assert set(env) <= ENV_NAMES and env["DJANGO_SETTINGS_MODULE"] == "septet_platform.settings.prod"
    assert env["SEPTET_STORAGE"] == "database"
    assert "VOLUME" not in by_kind, "each container's data folder is its own scratch, not a volume"
    assert check_command(yaml.safe_load(by_kind["CMD"][0])) == "web"


# Kubernetes --------------------------------------------------------------------------------------


def test_kubernetes_manifests_are_consistent_and_run_real_commands() -> None:
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    documents = _kubernetes_documents()
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for doc in documents:
        assert {"apiVersion", "kind", "metadata"} <= set(doc), doc
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc

    listed = set(kustomization["resources"])
    assert listed == {path.name for path in KUBERNETES.glob("*.yaml")} - {"kustomization.yaml"}
    roles = {}
    for name, deployment in by_kind["Deployment"].items():
        template = deployment["spec"]["template"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
        for container in template["spec"]["containers"]:
            roles[name] = check_command(container["command"])
            for source in container["envFrom"]:
                ref = source.get("configMapRef") or source["secretRef"]
                assert ref["name"] in by_kind["ConfigMap"] | by_kind["Secret"], ref
        for volume in template["spec"].get("volumes", []):
            assert set(volume) == {"name", "emptyDir"}, f"{name}: a volume of its own pods only, {volume}"
    assert roles == {
        "septet-web": "web",
        "septet-grpc": "grpc",
        "septet-worker": "worker:" + ",".join(sorted(settings.SEPTET_MATCH_QUEUES)),
        "septet-builder": "worker:" + settings.SEPTET_BUILD_QUEUE,
        "septet-tables": "worker:" + settings.SEPTET_TABLE_QUEUE,
        "septet-beat": "beat",
    }
    assert by_kind["Deployment"]["septet-beat"]["spec"]["replicas"] == 1
    job = by_kind["Job"]["septet-migrate"]["spec"]["template"]["spec"]["containers"][0]
    assert check_command(job["command"]) == "migrate+ladders"
    for service in by_kind["Service"].values():
        selected = [
            d for d in by_kind["Deployment"].values()
            if service["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
        ]  # fmt: skip
        assert len(selected) == 1, service["metadata"]["name"]
        ports = {p["name"] for c in selected[0]["spec"]["template"]["spec"]["containers"] for p in c["ports"]}
        assert {port["targetPort"] for port in service["spec"]["ports"]} <= ports
    autoscaler = by_kind["HorizontalPodAutoscaler"]["septet-worker"]["spec"]
    assert autoscaler["scaleTargetRef"]["name"] in by_kind["Deployment"]
    config_keys = set(by_kind["ConfigMap"]["septet-config"]["data"]).union(
        *(secret["stringData"] for secret in by_kind["Secret"].values())
    )
    assert config_keys <= ENV_NAMES
    assert "PersistentVolumeClaim" not in by_kind, "no volume shared by web, grpc and the workers"


# systemd -----------------------------------------------------------------------------------------


def _unit(path: Path) -> configparser.ConfigParser:
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    unit.read_string(path.read_text())
    return unit


def test_systemd_units_run_real_commands_from_the_install_folder() -> None:
    roles = {}
    for path in sorted(SYSTEMD.glob("*.service")):
        unit = _unit(path)
        assert {"Unit", "Service", "Install"} <= set(unit.sections()), path.name
        exec_start = shlex.split(unit["Service"]["ExecStart"])
        assert exec_start[0].startswith(VENV_BIN), path.name
        roles[path.name] = check_command(exec_start)
        worker = exec_start[0] == VENV_BIN + "septet"
        assert unit["Service"]["EnvironmentFile"] == f"/etc/septet/{'worker' if worker else 'septet'}.env"
    example = _env_example("septet.env.example")

    assert roles == {
        "septet-arena.service": "grpc",
        "septet-beat.service": "beat",
        "septet-web.service": "web",
        "septet-worker@.service": "worker:" + ",".join(sorted(settings.SEPTET_MATCH_QUEUES)),
        "septet-builder.service": "worker:" + settings.SEPTET_BUILD_QUEUE,
        "septet-tables.service": "worker:" + settings.SEPTET_TABLE_QUEUE,
    }
    assert set(example) <= ENV_NAMES
    assert "%i" in _unit(SYSTEMD / "septet-worker@.service")["Service"]["ExecStart"], "workers named apart"
    worker_example = _env_example("worker.env.example")
    assert set(worker_example) <= ENV_NAMES
    assert {"DATABASE_URL", "REDIS_URL"} <= set(worker_example) and "SECRET_KEY" not in worker_example
    assert example["SEPTET_STORAGE"] == worker_example["SEPTET_STORAGE"] == "database"


def _env_example(name: str) -> dict[str, str]:
    """An environment file of deploy/systemd, as systemd reads it (comments left out)."""
    return dict(
        line.split("=", 1)
        for line in (SYSTEMD / name).read_text().splitlines()
        if line and not line.startswith("#")
    )


def test_production_settings_load_from_the_example_environment_and_refuse_debug(tmp_path: Path) -> None:
    example = _env_example("septet.env.example")
    env = {**example, "SEPTET_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    check = [
        sys.executable,
        "-c",
        "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)",
    ]

    loaded = subprocess.run(check, env=env, capture_output=True, text=True, cwd=tmp_path)
    refused = subprocess.run(check, env={**env, "DEBUG": "1"}, capture_output=True, text=True, cwd=tmp_path)

    assert loaded.returncode == 0 and loaded.stdout.strip() == "False", loaded.stderr
    assert refused.returncode != 0 and "refuse to run with DEBUG on" in refused.stderr


# Every form: the site, the queues, the tables ----------------------------------------------------

FORMS = ("compose", "kubernetes", "systemd", "Dockerfile", "README")


def test_every_form_serves_the_site_as_asgi_under_the_site_worker() -> None:
    """Live viewers are coroutines, not threads, only if every form runs the ASGI app under uvicorn
    (the same as `septet up`'s own command)."""
    from septet_platform.asgi_worker import SiteWorker
    from septet_platform.launcher import _web_command

    commands = _commands_of_every_form()
    launcher = _web_command(type("Args", (), {"dev": False, "web": "127.0.0.1:8000"})())

    for form in FORMS:
        argv = commands[form][_where(form, "web")]
        assert check_command(argv) == "web", form
        assert argv[argv.index("--worker-class") + 1] == SITE_WORKER_CLASS, form
    assert SITE_APPLICATION in launcher and SITE_WORKER_CLASS in launcher, "septet up runs the same"
    assert SiteWorker.__module__ + "." + SiteWorker.__name__ == SITE_WORKER_CLASS


def test_every_queue_the_settings_route_to_is_consumed_and_tables_have_a_pool_of_their_own() -> None:
    """A queue no form consumes is never played; the tables' queue only on the tables worker, so a
    person's game (many minutes, mostly waiting) never holds a ladder worker's slot."""
    from septet_platform.matches import queues, tasks

    routed = {*settings.SEPTET_QUEUES, *queues.TASK_QUEUES.values(), queues.DEFAULT_QUEUE}
    routed |= {tasks.CHALLENGE_QUEUE, tasks.TABLE_QUEUE}
    commands = _commands_of_every_form()
    assert tasks.TABLE_QUEUE == settings.SEPTET_TABLE_QUEUE
    assert settings.SEPTET_TABLE_QUEUE in settings.SEPTET_QUEUES
    assert settings.SEPTET_TABLE_QUEUE not in settings.SEPTET_MATCH_QUEUES

    for form in ("compose", "kubernetes", "systemd", "README"):  # the Dockerfile runs the site alone
        consumed: dict[str, set[str]] = {}
        for name, argv in commands[form].items():
            queues = _consumed_queues(argv)
            if queues is not None:
                consumed[name] = queues
        assert set().union(*consumed.values()) == routed, form
        worker = consumed[_where(form, "worker")]
        assert settings.SEPTET_TABLE_QUEUE not in worker, f"{form}: the match worker never takes a table"
        assert consumed[_where(form, "tables")] == {settings.SEPTET_TABLE_QUEUE}, form
        tables = commands[form][_where(form, "tables")]
        assert _celery_option(tables, "--pool", "-P") == "threads", f"{form}: a table mostly waits"
        assert int(_celery_option(tables, "--concurrency", "-c")) >= 1, form
        assert _celery_option(tables, "-n", "--hostname").startswith("tables@"), form


def test_the_tables_worker_has_the_sandbox_rights_of_the_worker_and_an_honest_stop() -> None:
    """It starts its tables' bots in bubblewrap, so it needs what the match worker needs; and a
    stop waits for the tables in play long enough, saying that a table still in play is voided."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    pods = {
        doc["metadata"]["name"]: doc["spec"]["template"]["spec"]
        for doc in _kubernetes_documents()
        if doc["kind"] == "Deployment"
    }
    tables_unit = _unit(SYSTEMD / "septet-tables.service")["Service"]

    for key in ("user", "cap_add", "security_opt"):
        assert compose["tables"][key] == compose["worker"][key], key
    assert compose["tables"]["user"] == "0"
    assert (
        pods["septet-tables"]["containers"][0]["securityContext"]
        == pods["septet-worker"]["containers"][0]["securityContext"]
    )
    assert "User" not in tables_unit, "root, as septet-worker@.service, for the sandbox"
    assert "User" not in _unit(SYSTEMD / "septet-worker@.service")["Service"]
    assert re.fullmatch(r"\d+m", compose["tables"]["stop_grace_period"]), "compose's default is 10 s"
    assert int(compose["tables"]["stop_grace_period"][:-1]) * 60 >= 600
    grace = {name: pod.get("terminationGracePeriodSeconds", 30) for name, pod in pods.items()}
    assert grace["septet-tables"] >= 600 and grace["septet-tables"] > grace["septet-worker"]
    assert int(tables_unit["TimeoutStopSec"]) >= 600
    for path in (DEPLOY / "compose.yaml", KUBERNETES / "tables.yaml", SYSTEMD / "septet-tables.service"):
        assert "voided" in path.read_text(), f"{path.name} says what a stop does to a table in play"
    readme = (DEPLOY / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| tables |"))
    assert "ladder worker" in row and "how many people can play at once" in row
    assert "SEPTET_TABLE_WORKERS" in readme, "what sizes the pool in `septet up`"


def test_the_readme_tells_a_proxy_not_to_buffer_live_streams_and_to_let_them_stay_open() -> None:
    """A buffering proxy holds events back; a short read timeout cuts a stream that only sends its
    keepalive. The paths, the header and the keepalive named are the site's own."""
    from septet_platform import asgi
    from septet_platform.live_api import views

    readme = (DEPLOY / "README.md").read_text()
    location = re.search(r"location (\S+) \{(.*?)\}", readme, re.S)
    assert location, "an nginx location for the live streams"
    assert location[1] == asgi.STREAM_PREFIX == "/live/"
    assert "proxy_buffering off;" in location[2]
    read_timeout = re.search(r"proxy_read_timeout (\d+)s;", location[2])
    assert read_timeout and int(read_timeout[1]) >= 4 * views.KEEPALIVE_SECONDS
    assert 'nginx.ingress.kubernetes.io/proxy-buffering: "off"' in readme
    ingress_timeout = re.search(r'nginx.ingress.kubernetes.io/proxy-read-timeout: "(\d+)"', readme)
    assert ingress_timeout and int(ingress_timeout[1]) >= 4 * views.KEEPALIVE_SECONDS
    assert "X-Accel-Buffering: no" in readme
    assert '"X-Accel-Buffering"] = "no"' in Path(views.__file__).read_text(), "the site sends it"


def test_the_optional_settings_shown_commented_out_are_real_ones() -> None:
    """The live Redis (and the page threads) are optional: shown commented out, with names the
    project reads, in the systemd environment, the Kubernetes Secret and the README."""
    example = re.findall(r"^#([A-Z_]+)=", (SYSTEMD / "septet.env.example").read_text(), re.M)
    secret = re.findall(r"^  # ([A-Z_]+): ", (KUBERNETES / "config.yaml").read_text(), re.M)
    readme = (DEPLOY / "README.md").read_text()

    assert "SEPTET_LIVE_REDIS_URL" in example and "SEPTET_WEB_THREADS" in example
    assert secret == ["SEPTET_LIVE_REDIS_URL"]
    assert set(example) | set(secret) <= ENV_NAMES
    assert "| `SEPTET_LIVE_REDIS_URL` |" in readme and "| `SEPTET_WEB_THREADS` |" in readme


# The package the image installs -------------------------------------------------------------------


@pytest.mark.slow
def test_a_built_wheel_carries_templates_static_files_migrations_and_the_viewer(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    names = zipfile.ZipFile(next(tmp_path.glob("septet-*.whl"))).namelist()
    tracked = subprocess.run(
        ["git", "ls-files", "platform/septet_platform", "referee/tools/viewer"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.split()
    wanted = [
        name.removeprefix("platform/")
        for name in tracked
        if "/templates/" in name or "/static/" in name or "/migrations/" in name
    ]
    assert wanted, "the project has templates, static files and migrations"
    assert sorted(set(wanted) - set(names)) == []
