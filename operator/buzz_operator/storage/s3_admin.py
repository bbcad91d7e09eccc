"""Bucket administration for S3-compatible servers: `bucket_exists` and `ensure_bucket`.

obstore (object_store) has no bucket-level calls, and botocore must stay out of the product's
environment, so these two requests are signed here with AWS Signature Version 4 using only the
standard library. Blocking (urllib): call them through asyncio.to_thread from async code."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping

from .errors import StorageError, StorageUnavailable
from .s3_store import validate_bucket

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
TIMEOUT_S = 10.0


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def sigv4_authorization(
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    payload_sha256: str,
    access_key: str,
    secret_key: str,
    region: str,
    service: str,
    amz_date: str,
) -> str:
    """The Authorization header value for a request. `headers` must hold every header to sign,
    including host and x-amz-date; `amz_date` is the same timestamp (YYYYMMDD'T'HHMMSS'Z')."""
    parts = urllib.parse.urlsplit(url)
    canonical_uri = urllib.parse.quote(parts.path or "/", safe="/-_.~")
    query = sorted(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    canonical_query = "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}" for k, v in query
    )
    lowered = {k.lower().strip(): " ".join(v.strip().split()) for k, v in headers.items()}
    signed = ";".join(sorted(lowered))
    canonical_headers = "".join(f"{k}:{lowered[k]}\n" for k in sorted(lowered))
    canonical_request = "\n".join(
        [method, canonical_uri, canonical_query, canonical_headers, signed, payload_sha256]
    )
    day = amz_date[:8]
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret_key}".encode(), day), region), service), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"


def _request(
    method: str, endpoint: str, bucket: str, access_key: str, secret_key: str, region: str, body: bytes = b""
) -> int:
    """Send one signed bucket-level request; the HTTP status (errors included, except unreachable)."""
    url = f"{endpoint.rstrip('/')}/{validate_bucket(bucket)}"
    amz_date = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = hashlib.sha256(body).hexdigest()
    headers = {
        "host": urllib.parse.urlsplit(url).netloc,
        "x-amz-date": amz_date,
        "x-amz-content-sha256": payload,
    }
    headers["authorization"] = sigv4_authorization(
        method=method,
        url=url,
        headers=headers,
        payload_sha256=payload,
        access_key=access_key,
        secret_key=secret_key,
        region=region,
        service="s3",
        amz_date=amz_date,
    )
    request = urllib.request.Request(url, data=body or None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise StorageUnavailable(f"s3 {method} bucket {bucket!r} at {endpoint}: {exc}") from exc


def _status_error(status: int, what: str) -> StorageError:
    if status >= 500:
        return StorageUnavailable(f"{what}: server answered {status}")
    if status in (401, 403):
        return StorageError(f"{what}: credentials rejected ({status})")
    return StorageError(f"{what}: server answered {status}")


def bucket_exists(
    endpoint: str, bucket: str, *, access_key: str, secret_key: str, region: str = "us-east-1"
) -> bool:
    """HEAD the bucket: True on 200, False on 404, StorageError/StorageUnavailable otherwise."""
    status = _request("HEAD", endpoint, bucket, access_key, secret_key, region)
    if status == 200:
        return True
    if status == 404:
        return False
    raise _status_error(status, f"s3 HEAD bucket {bucket!r} at {endpoint}")


def ensure_bucket(
    endpoint: str, bucket: str, *, access_key: str, secret_key: str, region: str = "us-east-1"
) -> bool:
    """Create the bucket unless it exists; True when this call created it."""
    if bucket_exists(endpoint, bucket, access_key=access_key, secret_key=secret_key, region=region):
        return False
    # us-east-1 is S3's default location and takes no body; every other region must be named
    body = (
        b""
        if region == "us-east-1"
        else (
            '<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            f"<LocationConstraint>{region}</LocationConstraint></CreateBucketConfiguration>"
        ).encode()
    )
    status = _request("PUT", endpoint, bucket, access_key, secret_key, region, body)
    if status == 200:
        return True
    # 409 is BucketAlreadyOwnedByYou (a concurrent ensure_bucket won the race: fine) or
    # BucketAlreadyExists (someone else's name: not fine); a HEAD that succeeds tells them apart
    if status == 409 and bucket_exists(
        endpoint, bucket, access_key=access_key, secret_key=secret_key, region=region
    ):
        return False
    raise _status_error(status, f"s3 PUT bucket {bucket!r} at {endpoint}")
