"""The clients: the generated namespaces (one method per operation, ``_generated/operations.py``)
over one transport, with the helpers HTTP leaves to the caller: ``media.upload`` (the three steps
of an upload) and ``webhooks.verify`` (a delivery's Standard Webhooks signature)."""

from __future__ import annotations

from types import TracebackType
from typing import Optional, Type

import httpx

from ._generated.operations import AsyncResources, Resources
from ._transport import AsyncTransport, SyncTransport


class Postpilot(Resources):
    """The Postpilot API's client, synchronous: ``client.posts.create(...)``, ``client.media.upload(...)``.

    Args:
        api_key: An API key (``sk_live_…``).
        base_url: The service's address, without ``/v1``; default ``http://localhost:3000``.
        max_retries: Retries of a ``429`` or ``503`` (and of a lost connection where safe); default 2.
        max_retry_wait: The longest wait before a retry in seconds, whatever ``Retry-After`` says.
        timeout: Seconds per request (of a client made here).
        user_agent: Sent as ``User-Agent``.
        http_client: The ``httpx.Client`` to use (its proxies, its limits); closed by its owner.
    """

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
        self.transport = SyncTransport(
            api_key,
            base_url=base_url,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            timeout=timeout,
            user_agent=user_agent,
            http_client=http_client,
        )
        super().__init__(self.transport)

    def close(self) -> None:
        """Closes the HTTP client made here (not one given)."""
        self.transport.close()

    def __enter__(self) -> "Postpilot":
        return self

    def __exit__(
        self, kind: Optional[Type[BaseException]], err: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()


class AsyncPostpilot(AsyncResources):
    """The Postpilot API's client for asyncio: ``await client.posts.create(...)``.

    Takes what ``Postpilot`` takes; ``http_client`` is an ``httpx.AsyncClient``.
    """

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
        self.transport = AsyncTransport(
            api_key,
            base_url=base_url,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            timeout=timeout,
            user_agent=user_agent,
            http_client=http_client,
        )
        super().__init__(self.transport)

    async def aclose(self) -> None:
        """Closes the HTTP client made here (not one given)."""
        await self.transport.aclose()

    async def __aenter__(self) -> "AsyncPostpilot":
        return self

    async def __aexit__(
        self, kind: Optional[Type[BaseException]], err: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.aclose()
