"""The files under deploy/ parse, agree with each other, and run only what the project really has.

Every command a container, pod or unit runs is checked against the real entry points: gunicorn's
own option parser and the WSGI module, `django-admin` subcommands with their own argument parsers,
Celery's app and the queue names the settings route tasks to. Every environment variable they set
is one the settings (or a bot runtime) actually read. And a wheel built as the image builds it
carries the templates and static files the site serves.
"""

from __future__ import annotations

import configparser
import importlib.util
import re
import shlex
import subprocess
import sys
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


def _env_names_read_by_the_project() -> set[str]:
    """Names the settings read with os.environ, plus what the runtimes themselves read."""
    names = {"DJANGO_SETTINGS_MODULE", "PYTHONUNBUFFERED"}
    pattern = re.compile(r"os\.environ(?:\.get)?[\[(]\s*\"([A-Z_]+)\"")
    for path in (ROOT / "platform" / "septet_platform" / "settings").glob("*.py"):
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
        from gunicorn.config import Config

        parsed = Config().parser().parse_args(argv[1:])
        module, _, attribute = parsed.args[0].partition(":")
        spec = importlib.util.find_spec(module)
        assert spec and spec.origin, f"gunicorn app module {module} does not exist"
        assert re.search(rf"^{attribute} = ", Path(spec.origin).read_text(), re.M), (
            f"{module} has no {attribute}"
        )
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
    raise AssertionError(f"{argv[0]} is not one of the project's entry points")


def _kubernetes_documents() -> list[dict[str, Any]]:
    documents = []
    for path in sorted(KUBERNETES.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            documents += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return documents


def _roles_of_a_whole_installation() -> dict[str, str]:
    """Each role an installation runs, by the name compose and the README give it; the worker
    and the builder between them consume every queue the settings route tasks to (a queue nobody
    consumes is never played), the builder the builds alone (a build never holds a match slot)."""
    return {
        "migrate": "migrate+ladders",
        "web": "web",
        "grpc": "grpc",
        "worker": "worker:" + ",".join(sorted(settings.SEPTET_MATCH_QUEUES)),
        "builder": "worker:" + settings.SEPTET_BUILD_QUEUE,
        "beat": "beat",
    }


# Compose -----------------------------------------------------------------------------------------


def test_compose_runs_every_role_once_with_real_commands_and_known_settings() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    roles = {
        name: check_command(service["command"]) for name, service in services.items() if "build" in service
    }

    assert set(services) == {"postgres", "redis", "migrate", "web", "grpc", "worker", "builder", "beat"}
    assert roles == _roles_of_a_whole_installation()
    assert services["beat"]["deploy"]["replicas"] == 1
    for name, service in services.items():
        if "build" in service:
            assert set(service["environment"]) <= ENV_NAMES, name
            assert service["build"]["dockerfile"] == "deploy/Dockerfile"
            assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
    assert services["web"]["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?"), "no default secret"
    assert "SYS_ADMIN" in services["worker"]["cap_add"], "the sandbox needs namespaces in the worker"
    assert "SYS_ADMIN" in services["builder"]["cap_add"], "and in the builder"


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
    rows = re.findall(r"^\| (\w+) \| `([^`]+)` \|", (DEPLOY / "README.md").read_text(), re.M)
    roles = {
        name: "+".join(check_command(shlex.split(part)) for part in command.split("&&"))
        for name, command in rows
    }

    assert roles == _roles_of_a_whole_installation()


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
            assert volume["persistentVolumeClaim"]["claimName"] in by_kind["PersistentVolumeClaim"]
    assert roles == {
        "septet-web": "web",
        "septet-grpc": "grpc",
        "septet-worker": "worker:" + ",".join(sorted(settings.SEPTET_MATCH_QUEUES)),
        "septet-builder": "worker:" + settings.SEPTET_BUILD_QUEUE,
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
    config_keys = set(by_kind["ConfigMap"]["septet-config"]["data"]) | set(
        by_kind["Secret"]["septet-secrets"]["stringData"]
    )
    assert config_keys <= ENV_NAMES


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
        assert unit["Service"]["EnvironmentFile"] == "/etc/septet/septet.env"
    example = dict(
        line.split("=", 1)
        for line in (SYSTEMD / "septet.env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )

    assert roles == {
        "septet-arena.service": "grpc",
        "septet-beat.service": "beat",
        "septet-web.service": "web",
        "septet-worker@.service": "worker:" + ",".join(sorted(settings.SEPTET_MATCH_QUEUES)),
        "septet-builder.service": "worker:" + settings.SEPTET_BUILD_QUEUE,
    }
    assert set(example) <= ENV_NAMES
    assert "%i" in _unit(SYSTEMD / "septet-worker@.service")["Service"]["ExecStart"], "workers named apart"


def test_production_settings_load_from_the_example_environment_and_refuse_debug(tmp_path: Path) -> None:
    example = dict(
        line.split("=", 1)
        for line in (SYSTEMD / "septet.env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
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
