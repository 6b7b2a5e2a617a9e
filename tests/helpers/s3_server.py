"""A real S3-compatible server for the tests: moto's standalone server (``python -m moto.server``) on
127.0.0.1, started in its own process and stopped after. The code under test talks to it through its
production clients (pyarrow's S3 filesystem, boto3), found by the standard ``AWS_ENDPOINT_URL`` and
``AWS_*`` credential variables, exactly as it would talk to AWS S3 or MinIO."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "paddock-test", "AWS_SECRET_ACCESS_KEY": "paddock-test-secret",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def s3_server(buckets=("paddock-data",), timeout_s: float = 60.0):
    """Start the server, create ``buckets``, point this process's environment at it (children and Ray
    workers started afterwards inherit it); yields the endpoint URL. Stops the server and restores the
    environment after."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    saved = {k: os.environ.get(k) for k in (*CREDENTIALS, "AWS_ENDPOINT_URL")}
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto's S3 server did not start on port {port}") from None
                time.sleep(0.1)
        os.environ.update(CREDENTIALS, AWS_ENDPOINT_URL=endpoint)
        import boto3
        client = boto3.client("s3")
        for bucket in buckets:
            client.create_bucket(Bucket=bucket)
        yield endpoint
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
