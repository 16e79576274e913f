"""A real S3 server for the SEPTET_STORAGE=s3 tests: moto's server (`moto[server]`, in the dev
extra) started as a process of its own on a free 127.0.0.1 port, spoken to over HTTP exactly as
S3 or MinIO would be (never moto's in-process mocks, which patch botocore and so would test
nothing of the wire). One per test session (per xdist worker): it takes about three seconds to
start; each test gets a bucket of its own.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from typing import Any

REGION = "us-east-1"
ACCESS_KEY = "septet-test-key"
SECRET_KEY = "septet-test-secret"
START_SECONDS = 60.0


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on (bound and released: moto cannot take port 0)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class S3Server:
    """`python -m moto.server` on 127.0.0.1:`port`, until `stop`."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"moto's S3 server exited with {self.process.returncode} before it answered"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"moto's S3 server did not answer on {self.endpoint}") from None
                time.sleep(0.05)

    def client(self) -> Any:
        """A boto3 client of the server, as anyone holding the bucket's keys has (the tests change
        objects behind the platform's back with it)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def new_bucket(self) -> str:
        name = f"septet-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def options(self, bucket: str, **more: Any) -> dict[str, Any]:
        """The `s3` settings (`selection.storage_backends("s3", s3=...)`) of `bucket` here."""
        return {
            "bucket": bucket,
            "endpoint_url": self.endpoint,
            "region": REGION,
            "access_key": ACCESS_KEY,
            "secret_key": SECRET_KEY,
            **more,
        }

    def keys(self, bucket: str) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return sorted(entry["Key"] for page in pages for entry in page.get("Contents", ()))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
