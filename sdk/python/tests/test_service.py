"""The SDK against the running service (conftest.py says where): an upload with the helper and a
post with its media, a listing read page after page, a 429 met and retried after Retry-After, and
a real webhook delivery verified."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Tuple

import httpx
import pytest
from conftest import png

from postpilot import AsyncPostpilot, Postpilot, RateLimitError, WebhookVerificationError

# A day ahead: the posts stay scheduled, so nothing is published while the tests run.
LATER = datetime.now(timezone.utc) + timedelta(days=1)


def client(service: Dict[str, Any], concern: str, **options: Any) -> Postpilot:
    return Postpilot(service["accounts"][concern]["key"], base_url=service["base_url"], **options)


def test_upload_then_post_with_the_media(service: Dict[str, Any]) -> None:
    account = service["accounts"]["posts"]
    with client(service, "posts") as pp:
        item = pp.media.upload(png(), file_name="dot.png", alt_text="A small gradient")
        assert item["status"] == "ready"
        assert item["mimeType"] == "image/png"
        post = pp.posts.create(content="With a picture", channel_ids=[account["channelId"]], media_ids=[item["id"]], publish_at=LATER)
        assert post["status"] == "scheduled"
        assert [m["id"] for m in post["media"]] == [item["id"]]
        assert pp.posts.get(post["id"])["id"] == post["id"]


def test_async_upload_from_a_path_and_async_pages(service: Dict[str, Any], tmp_path: Path) -> None:
    account = service["accounts"]["async"]
    path = tmp_path / "gradient.png"
    path.write_bytes(png(24, 24))

    async def run() -> Tuple[Dict[str, Any], List[str], List[str]]:
        async with AsyncPostpilot(account["key"], base_url=service["base_url"]) as pp:
            item = await pp.media.upload(path)
            made = [
                (await pp.posts.create(content=f"Async {n}", channel_ids=[account["channelId"]], publish_at=LATER))["id"]
                for n in range(3)
            ]
            seen = [p["id"] async for p in pp.posts.list_all(limit=2)]
            return dict(item), made, seen

    item, made, seen = asyncio.run(run())
    assert item["status"] == "ready" and item["fileName"] == "gradient.png"
    assert sorted(seen) == sorted(made)


def test_list_all_reads_every_page(service: Dict[str, Any]) -> None:
    account = service["accounts"]["posts"]
    asked: List[httpx.URL] = []
    http = httpx.Client(event_hooks={"request": [lambda r: asked.append(r.url) if r.url.path == "/v1/posts" and r.method == "GET" else None]})
    with http, client(service, "posts", http_client=http) as pp:
        made = {pp.posts.create(content=f"Post {n}", channel_ids=[account["channelId"]], publish_at=LATER)["id"] for n in range(5)}
        seen = [p["id"] for p in pp.posts.list_all(limit=2)]
    assert made <= set(seen)
    assert len(seen) == len(set(seen))
    assert len(asked) >= 3
    assert all(u.params["limit"] == "2" for u in asked)
    assert "cursor" not in asked[0].params and all(u.params.get("cursor") for u in asked[1:])


def test_a_429_is_retried_after_retry_after(service: Dict[str, Any]) -> None:
    account = service["accounts"]["rate"]
    with client(service, "rate", max_retries=0) as eager:
        refused = None
        for _ in range(100):
            try:
                eager.me.get()
            except RateLimitError as err:
                refused = err
                break
        assert refused is not None and refused.code == "rate_limited" and refused.retry_after is not None
        assert refused.request_id
    # The key's window now ends in 1.5 s: the client waits what Retry-After says, then gets through.
    httpx.post(f"{service['base_url']}/__test/rate-window", params={"key": account["keyId"], "ms": "1500"}).raise_for_status()
    with client(service, "rate") as patient:
        started = time.monotonic()
        me = patient.me.get()
        waited = time.monotonic() - started
    assert me["organization"]["plan"] == "PRO"
    assert waited >= 1.0


class _Receiver(BaseHTTPRequestHandler):
    got: "queue.Queue[Tuple[Any, bytes]]"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        self.got.put((self.headers, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_real_delivery_is_verified(service: Dict[str, Any]) -> None:
    got: "queue.Queue[Tuple[Any, bytes]]" = queue.Queue()
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Receiver", (_Receiver,), {"got": got}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with client(service, "webhooks") as pp:
            made = pp.webhooks.create(url=f"http://127.0.0.1:{server.server_port}/hooks", events=["post.published"])
            sent = pp.webhooks.test(made["endpoint"]["id"])
            headers, body = got.get(timeout=30)
            event = pp.webhooks.verify(body, headers, made["secret"])
            assert event["type"] == "webhook.test"
            assert event["data"]["endpointId"] == made["endpoint"]["id"]
            assert headers["webhook-id"] == sent["eventId"]
            with pytest.raises(WebhookVerificationError):
                pp.webhooks.verify(body.replace(b"webhook.test", b"webhook.fake"), headers, made["secret"])
    finally:
        server.shutdown()
        server.server_close()
