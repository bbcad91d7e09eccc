"""The stdlib SigV4 signer of s3_admin against botocore's, the reference implementation. botocore
may not enter the product's venv, so it runs from the S3 test server's own venv (moto depends on
it), which the s3_server fixture has built."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.storage.s3_admin import sigv4_authorization

S3_VENV_PYTHON = (
    Path(os.environ.get("BUZZ_CACHE", Path.home() / ".cache/buzz-operator")) / "s3-venv" / "bin" / "python"
)

# botocore signs the request and hands back the headers it set (its own clock picks x-amz-date)
BOTOCORE_SIGN = """
import json, sys
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
a = json.load(sys.stdin)
req = AWSRequest(method=a["method"], url=a["url"], data=a["body"].encode())
S3SigV4Auth(Credentials(a["access_key"], a["secret_key"]), "s3", a["region"]).add_auth(req)
print(json.dumps({k.lower(): v for k, v in req.headers.items()}))
"""


@pytest.mark.parametrize(
    ("method", "url", "body", "region"),
    [
        ("PUT", "http://127.0.0.1:59000/my-bucket", "", "us-east-1"),
        (
            "PUT",
            "http://127.0.0.1:59000/eu-bucket",
            '<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            "<LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>",
            "eu-west-1",
        ),
        ("HEAD", "https://s3.example.com:9443/bucket.with.dots", "", "us-west-2"),
    ],
)
def test_signature_matches_botocore(s3_server: Any, method: str, url: str, body: str, region: str) -> None:
    request = {
        "method": method,
        "url": url,
        "body": body,
        "access_key": "AKIDEXAMPLE",
        "secret_key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "region": region,
    }
    signed = subprocess.run(
        [str(S3_VENV_PYTHON), "-c", BOTOCORE_SIGN],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
    )
    boto = json.loads(signed.stdout)
    ours = sigv4_authorization(
        method=method,
        url=url,
        headers={
            "host": url.split("/")[2],
            "x-amz-date": boto["x-amz-date"],
            "x-amz-content-sha256": boto["x-amz-content-sha256"],
        },
        payload_sha256=boto["x-amz-content-sha256"],
        access_key=request["access_key"],
        secret_key=request["secret_key"],
        region=region,
        service="s3",
        amz_date=boto["x-amz-date"],
    )
    assert ours == boto["authorization"]
