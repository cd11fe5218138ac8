"""The transport's rules without a service: httpx.MockTransport answers as the test says."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Callable, List

import httpx
import pytest
import standardwebhooks

from postpilot import (
    NOT_GIVEN,
    APIConnectionError,
    Postpilot,
    RateLimitError,
    ServerError,
    ValidationError,
    WebhookVerificationError,
    retry_after_seconds,
    verify_webhook,
)


def mocked(answer: Callable[[httpx.Request], httpx.Response], **options: object) -> "tuple[Postpilot, List[httpx.Request]]":
    seen: List[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    return Postpilot("sk_live_test", base_url="http://api.test", http_client=http, **options), seen  # type: ignore[arg-type]


def unavailable(_: httpx.Request) -> httpx.Response:
    return httpx.Response(503, headers={"retry-after": "0"}, json={"error": {"code": "internal_error", "message": "Busy"}})


def test_a_create_without_its_key_is_not_retried_on_503() -> None:
    pp, seen = mocked(unavailable)
    with pytest.raises(ServerError) as caught:
        pp.tags.create(name="Launch")
    assert len(seen) == 1 and "idempotency-key" not in seen[0].headers
    assert caught.value.status == 503 and caught.value.retry_after == 0


def test_a_create_with_its_key_is_retried_with_the_same_key() -> None:
    answers = iter([unavailable, lambda r: httpx.Response(201, json={"id": "post_1"})])
    pp, seen = mocked(lambda r: next(answers)(r))
    assert pp.posts.create(content="Hi", channel_ids=["ch_1"]) == {"id": "post_1"}
    keys = [r.headers["idempotency-key"] for r in seen]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert json.loads(seen[0].content) == {"content": "Hi", "channelIds": ["ch_1"]}


def test_a_429_is_retried_at_most_max_retries_times() -> None:
    pp, seen = mocked(lambda r: httpx.Response(429, headers={"retry-after": "0", "x-request-id": "req_1"}), max_retries=2)
    with pytest.raises(RateLimitError) as caught:
        pp.tags.create(name="Launch")
    assert len(seen) == 3 and caught.value.request_id == "req_1"


def test_a_lost_connection_is_not_retried_where_the_work_could_be_done_twice() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    pp, seen = mocked(refuse)
    with pytest.raises(APIConnectionError):
        pp.tags.create(name="Launch")
    assert len(seen) == 1


def test_errors_carry_code_details_and_request_id() -> None:
    body = {"error": {"code": "validation_failed", "message": "No.", "details": {"fields": [{"path": "name", "message": "Too long"}]}}}
    pp, _ = mocked(lambda r: httpx.Response(422, headers={"x-request-id": "req_9"}, json=body))
    with pytest.raises(ValidationError) as caught:
        pp.tags.create(name="x" * 99)
    err = caught.value
    assert (err.status, err.code, err.request_id) == (422, "validation_failed", "req_9")
    assert err.fields == [{"path": "name", "message": "Too long"}]


def test_query_path_and_body_are_written_as_the_api_reads_them() -> None:
    pp, seen = mocked(lambda r: httpx.Response(200, json={"data": [], "nextCursor": None}))
    pp.posts.list(from_=datetime(2026, 1, 2, tzinfo=timezone.utc), status="scheduled", limit=None)
    pp.posts.export_csv(drafts=True)
    pp.comments.update("cmt/1", assignee_user_id=None)
    pp.comments.update("cmt_2", status="read")
    assert seen[0].url.params["from"] == "2026-01-02T00:00:00+00:00" and "limit" not in seen[0].url.params
    assert seen[1].url.params["drafts"] == "true"
    assert seen[2].url.raw_path == b"/v1/comments/cmt%2F1" and json.loads(seen[2].content) == {"assigneeUserId": None}
    assert json.loads(seen[3].content) == {"status": "read"}
    assert pp.comments.update.__kwdefaults__["assignee_user_id"] is NOT_GIVEN
    with pytest.raises(ValueError):
        pp.posts.list(from_=datetime(2026, 1, 2))


def test_retry_after_as_seconds_or_a_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("3") == 3
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:05 GMT", now) == 5
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_verify_refuses_what_is_not_signed_by_the_secret() -> None:
    secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = '{"type":"webhook.test","timestamp":"2026-01-01T00:00:00.000Z","data":{}}'
    now = datetime.now(timezone.utc)
    headers = {
        "Webhook-Id": "msg_1",
        "Webhook-Timestamp": str(int(now.timestamp())),
        "Webhook-Signature": standardwebhooks.Webhook(secret).sign("msg_1", now, body),
    }
    assert verify_webhook(body, headers, secret)["type"] == "webhook.test"
    for bad in [{**headers, "Webhook-Signature": "v1"}, {**headers, "Webhook-Id": "msg_2"}, {}]:
        with pytest.raises(WebhookVerificationError):
            verify_webhook(body, bad, secret)
