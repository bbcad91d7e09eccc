"""The stdlib SigV4 signer behind ensure_bucket, checked against AWS's published Signature Version 4
test-suite vectors; the test server (versitygw) verifies them for real in the integration tier."""

from __future__ import annotations

import hashlib

import pytest
from buzz_operator.storage.errors import StorageError
from buzz_operator.storage.s3_admin import EMPTY_SHA256, bucket_exists, sigv4_authorization

ACCESS = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
DATE = "20150830T123600Z"


def sign(url: str) -> str:
    return sigv4_authorization(
        method="GET",
        url=url,
        headers={"Host": "example.amazonaws.com", "X-Amz-Date": DATE},
        payload_sha256=EMPTY_SHA256,
        access_key=ACCESS,
        secret_key=SECRET,
        region="us-east-1",
        service="service",
        amz_date=DATE,
    )


def test_get_vanilla() -> None:
    assert sign("https://example.amazonaws.com/") == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=host;x-amz-date, "
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    )


def test_get_vanilla_query_order_key_case() -> None:
    assert sign("https://example.amazonaws.com/?Param2=value2&Param1=value1").endswith(
        "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
    )


def test_empty_payload_hash_constant() -> None:
    assert hashlib.sha256(b"").hexdigest() == EMPTY_SHA256


def test_secret_is_not_in_the_header() -> None:
    assert SECRET not in sign("https://example.amazonaws.com/")


def test_bad_bucket_name_is_refused_before_any_request() -> None:
    # port 9 (discard) is never contacted: validation comes first
    with pytest.raises(StorageError, match="bucket 'Bad_Bucket' is not a valid S3 bucket name"):
        bucket_exists("http://127.0.0.1:9", "Bad_Bucket", access_key="a", secret_key="b")
