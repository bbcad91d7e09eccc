"""The stdlib SigV4 signer of s3_admin against botocore's, the reference implementation. botocore
may not enter the product's venv, so it runs from a venv of its own (`hack/s3.sh reference-venv`
builds it once). The S3 test server checks these signatures for real (test_s3_server.py); this
compares them with AWS's own code on requests the server never sees (other regions, hosts)."""

from __future__ import annotations

import json
import subprocess

import pytest
from buzz_operator.storage.s3_admin import sigv4_authorization

from tests.support.cluster import hack


@pytest.fixture(scope="module")
def botocore_python() -> str:
    return hack("s3.sh", "reference-venv").strip().splitlines()[-1]

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
def test_signature_matches_botocore(botocore_python: str, method: str, url: str, body: str, region: str) -> None:
    request = {
        "method": method,
        "url": url,
        "body": body,
        "access_key": "AKIDEXAMPLE",
        "secret_key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "region": region,
    }
    signed = subprocess.run(
        [botocore_python, "-c", BOTOCORE_SIGN],
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
