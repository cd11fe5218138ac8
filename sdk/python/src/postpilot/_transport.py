"""One request to the API, as every method of the client makes it:

- the key as ``Authorization: Bearer …``, JSON bodies (a CSV one for the import), query values as
  text (lists repeated, booleans ``true``/``false``, datetimes in ISO 8601 with their offset), path
  values escaped;
- an ``Idempotency-Key`` on every operation that takes one, generated unless given, so a retry
  (the client's or the caller's with the same key) never does the work twice;
- ``429`` retried always (the API refused it before doing anything), ``503`` and a lost connection
  only where a retry cannot do the work twice (GET, PUT, DELETE, or a request with its
  Idempotency-Key); at most ``max_retries`` times, after ``Retry-After`` (seconds or a date) when
  the API gives it, else after 0.5 s, 1 s, 2 s…, never longer than ``max_retry_wait``;
- errors as the classes of ``_errors``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, AsyncIterator, Dict, FrozenSet, Iterator, List, Mapping, Optional, Tuple, Union
from urllib.parse import quote

import httpx

from ._errors import APIConnectionError, PostpilotError, error_of
from ._version import __version__

DEFAULT_BASE_URL = "http://localhost:3000"
SAFE_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE"})
FIRST_BACKOFF = 0.5


class NotGiven:
    """The default of a field the API lets be null: not sent at all (None sends null)."""

    _instance: Optional["NotGiven"] = None

    def __new__(cls) -> "NotGiven":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()


@dataclass(frozen=True)
class Operation:
    """An operation as the generated table states it (``_generated/operations.py``)."""

    id: str
    method: str
    #: The path below ``/v1``, with ``{name}`` for each path value.
    path: str
    #: The operation takes an Idempotency-Key.
    idempotent: bool = False
    #: The body's media type, when it takes one.
    body: Optional[str] = None
    body_required: bool = False
    #: The success answer's media type; None: 204.
    answer: Optional[str] = None
    #: The body fields the API lets be null: None is sent for them (NOT_GIVEN leaves them out).
    nullable: FrozenSet[str] = field(default_factory=frozenset)


def retry_after_seconds(value: Optional[str], now: Optional[datetime] = None) -> Optional[float]:
    """``Retry-After`` as seconds: delay-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return max(0.0, (at - (now or datetime.now(timezone.utc))).total_seconds())


def _instant(value: Union[datetime, date]) -> str:
    if isinstance(value, datetime) and value.tzinfo is None:
        # The API takes instants with their offset only; a naive datetime says no zone.
        raise ValueError(f"{value!r} has no time zone: give the datetime a tzinfo (e.g. timezone.utc)")
    return value.isoformat()


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return _instant(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime, date)):
        return _instant(value)
    return str(value)


@dataclass
class _Prepared:
    method: str
    url: str
    headers: Dict[str, str]
    params: List[Tuple[str, Union[str, int, float, bool, None]]]
    content: Optional[bytes]
    #: A retry cannot do the work twice.
    retriable: bool


class _Base:
    def __init__(
        self,
        api_key: str,
        *,
        base_url: Optional[str],
        max_retries: int,
        max_retry_wait: float,
        user_agent: Optional[str],
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required")
        self._api_key = api_key
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.user_agent = user_agent or f"postpilot-python/{__version__}"

    def _prepare(
        self,
        op: Operation,
        path: Optional[Mapping[str, str]],
        query: Optional[Mapping[str, Any]],
        body: Any,
        idempotency_key: Optional[str],
        headers: Optional[Mapping[str, str]],
    ) -> _Prepared:
        def value(name: str) -> str:
            v = (path or {}).get(name)
            if v is None or v == "":
                raise ValueError(f"{op.id}: {name} is required")
            return quote(str(v), safe="")

        url_path = op.path
        for name in re.findall(r"\{(\w+)\}", op.path):
            url_path = url_path.replace("{" + name + "}", value(name))
        params: List[Tuple[str, Union[str, int, float, bool, None]]] = []
        for name, v in (query or {}).items():
            if v is None or v is NOT_GIVEN:
                continue
            for one in v if isinstance(v, (list, tuple, set, frozenset)) else [v]:
                params.append((name, _query_text(one)))
        out: Dict[str, str] = {
            "authorization": f"Bearer {self._api_key}",
            "accept": op.answer or "application/json",
            "user-agent": self.user_agent,
        }
        content: Optional[bytes] = None
        if op.body == "text/csv":
            if body is not None:
                out["content-type"] = "text/csv"
                content = body.encode() if isinstance(body, str) else bytes(body)
        elif op.body:
            fields = {
                k: v
                for k, v in (body or {}).items()
                if v is not NOT_GIVEN and (v is not None or k in op.nullable)
            }
            if fields or op.body_required:
                out["content-type"] = op.body
                content = json.dumps(fields, default=_json_default, ensure_ascii=False, separators=(",", ":")).encode()
        if op.idempotent:
            out["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        for name, v in (headers or {}).items():
            out[name.lower()] = v
        retriable = op.method in SAFE_METHODS or "idempotency-key" in out
        return _Prepared(op.method, f"{self.base_url}/v1{url_path}", out, params, content, retriable)

    def _wait(self, attempt: int, retry_after: Optional[float]) -> float:
        return min(retry_after if retry_after is not None else FIRST_BACKOFF * 2**attempt, self.max_retry_wait)

    def _again(self, status: int, prepared: _Prepared, attempt: int) -> bool:
        return (status == 429 or (status == 503 and prepared.retriable)) and attempt < self.max_retries

    @staticmethod
    def _answer(op: Operation, res: httpx.Response) -> Any:
        if res.status_code == 204 or not op.answer:
            return None
        return res.text if op.answer == "text/csv" else res.json()

    @staticmethod
    def _error(res: httpx.Response) -> PostpilotError:
        try:
            parsed = res.json()
        except ValueError:
            parsed = None
        return error_of(
            res.status_code,
            parsed,
            res.headers.get("x-request-id"),
            retry_after_seconds(res.headers.get("retry-after")),
        )

    @staticmethod
    def _lost(prepared: _Prepared, err: Exception) -> APIConnectionError:
        return APIConnectionError(
            f"{prepared.method} {prepared.url}: {err}", status=0, code="connection_failed", details=None, request_id=None
        )


class SyncTransport(_Base):
    """The requests of ``Postpilot``: an ``httpx.Client`` (the caller's, or one of its own)."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: Optional[str] = None,
        max_retries: int = 2,
        max_retry_wait: float = 60.0,
        timeout: float = 60.0,
        user_agent: Optional[str] = None,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        super().__init__(
            api_key, base_url=base_url, max_retries=max_retries, max_retry_wait=max_retry_wait, user_agent=user_agent
        )
        self._own = http_client is None
        self.http = http_client or httpx.Client(timeout=timeout)

    def call(
        self,
        op: Operation,
        *,
        path: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        """The operation's answer: its JSON (or CSV text), None for a 204; an error class otherwise."""
        p = self._prepare(op, path, query, body, idempotency_key, headers)
        attempt = 0
        while True:
            try:
                res = self.http.request(p.method, p.url, params=p.params, headers=p.headers, content=p.content)
            except httpx.TransportError as err:
                if p.retriable and attempt < self.max_retries:
                    time.sleep(self._wait(attempt, None))
                    attempt += 1
                    continue
                raise self._lost(p, err) from err
            if res.is_success:
                return self._answer(op, res)
            if self._again(res.status_code, p, attempt):
                time.sleep(self._wait(attempt, retry_after_seconds(res.headers.get("retry-after"))))
                attempt += 1
                continue
            raise self._error(res)

    def pages(
        self,
        op: Operation,
        *,
        path: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Iterator[Any]:
        """Every item of a listing, page after page (its ``nextCursor``), as one iteration."""
        cursor = (query or {}).get("cursor")
        while True:
            page = self.call(op, path=path, query={**(query or {}), "cursor": cursor}, headers=headers)
            yield from page["data"]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def put_file(self, url: str, headers: Mapping[str, str], content: Any) -> httpx.Response:
        """The bytes of an upload to the address the API gave, with exactly its headers (no key)."""
        return self.http.put(url, headers=dict(headers), content=content)

    def close(self) -> None:
        if self._own:
            self.http.close()


class AsyncTransport(_Base):
    """The requests of ``AsyncPostpilot``: an ``httpx.AsyncClient`` (the caller's, or one of its own)."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: Optional[str] = None,
        max_retries: int = 2,
        max_retry_wait: float = 60.0,
        timeout: float = 60.0,
        user_agent: Optional[str] = None,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        super().__init__(
            api_key, base_url=base_url, max_retries=max_retries, max_retry_wait=max_retry_wait, user_agent=user_agent
        )
        self._own = http_client is None
        self.http = http_client or httpx.AsyncClient(timeout=timeout)

    async def call(
        self,
        op: Operation,
        *,
        path: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        """The operation's answer: its JSON (or CSV text), None for a 204; an error class otherwise."""
        p = self._prepare(op, path, query, body, idempotency_key, headers)
        attempt = 0
        while True:
            try:
                res = await self.http.request(p.method, p.url, params=p.params, headers=p.headers, content=p.content)
            except httpx.TransportError as err:
                if p.retriable and attempt < self.max_retries:
                    await asyncio.sleep(self._wait(attempt, None))
                    attempt += 1
                    continue
                raise self._lost(p, err) from err
            if res.is_success:
                return self._answer(op, res)
            if self._again(res.status_code, p, attempt):
                await asyncio.sleep(self._wait(attempt, retry_after_seconds(res.headers.get("retry-after"))))
                attempt += 1
                continue
            raise self._error(res)

    async def pages(
        self,
        op: Operation,
        *,
        path: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> AsyncIterator[Any]:
        """Every item of a listing, page after page (its ``nextCursor``), as one ``async for``."""
        cursor = (query or {}).get("cursor")
        while True:
            page = await self.call(op, path=path, query={**(query or {}), "cursor": cursor}, headers=headers)
            for item in page["data"]:
                yield item
            cursor = page.get("nextCursor")
            if not cursor:
                return

    async def put_file(self, url: str, headers: Mapping[str, str], content: Any) -> httpx.Response:
        """The bytes of an upload to the address the API gave, with exactly its headers (no key)."""
        return await self.http.put(url, headers=dict(headers), content=content)

    async def aclose(self) -> None:
        if self._own:
            await self.http.aclose()
