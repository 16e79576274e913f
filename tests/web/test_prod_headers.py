"""Production settings' security headers, read from a real process started with them (as gunicorn
would load them): HSTS on HTTPS requests, the Content-Security-Policy on every response, HSTS
only where the site is served over TLS, and the TLS-terminating proxy switch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, django
django.setup()
from django.test import Client
response = Client().get("/healthz", secure=SECURE, headers=HEADERS)
print(json.dumps({name.lower(): value for name, value in response.items()}))
"""


def headers_under_prod(tmp_path: Path, *, secure: bool, extra_env: dict[str, str] | None = None,
                       request_headers: dict[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    env = {
        key: value for key, value in os.environ.items() if key not in ("DEBUG", "SEPTET_ALLOW_UNSANDBOXED")
    }
    env |= {
        "DJANGO_SETTINGS_MODULE": "septet_platform.settings.prod",
        "SECRET_KEY": "k" * 50,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        "SEPTET_DATA_DIR": str(tmp_path),
        "ALLOWED_HOSTS": "testserver",
        **(extra_env or {}),
    }
    script = PROBE.replace("SECURE", repr(secure)).replace("HEADERS", repr(request_headers or {}))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_https_responses_carry_hsts_and_every_response_the_csp(tmp_path: Path) -> None:
    secure = headers_under_prod(tmp_path, secure=True)
    plain = headers_under_prod(tmp_path, secure=False)

    assert secure["strict-transport-security"].startswith("max-age=31536000")
    assert "strict-transport-security" not in plain  # browsers ignore it over http anyway
    for response in (secure, plain):
        assert "default-src 'self'" in response["content-security-policy"]
        assert "frame-ancestors 'none'" in response["content-security-policy"]
        assert response["x-content-type-options"] == "nosniff"


def test_no_hsts_for_a_plain_http_installation(tmp_path: Path) -> None:
    trial = headers_under_prod(tmp_path, secure=True, extra_env={"SEPTET_HTTPS": "0"})
    assert "strict-transport-security" not in trial


def test_behind_a_tls_proxy_hsts_follows_x_forwarded_proto(tmp_path: Path) -> None:
    proxied = {"SEPTET_PROXY_SSL_HEADER": "1"}
    forwarded = headers_under_prod(
        tmp_path, secure=False, extra_env=proxied, request_headers={"X-Forwarded-Proto": "https"}
    )
    unforwarded = headers_under_prod(tmp_path, secure=False, extra_env=proxied)

    assert forwarded["strict-transport-security"].startswith("max-age=")
    assert "strict-transport-security" not in unforwarded and unforwarded.get("location", "").startswith(
        "https://"
    )
