"""A file into the media library in one call: the three steps of an upload (create, PUT the bytes
to the address given with exactly the headers given, complete), then the item read until it is
``ready`` (or ``failed``, an error then). The generated ``media`` resources take these methods in
(``client.media.upload``); they call the generated ``create_upload``, ``complete_upload`` and
``get``, so an upload meets the same retries and errors as any call."""

from __future__ import annotations

import asyncio
import io
import mimetypes
import os
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, AsyncIterator, Dict, Mapping, Optional, Union

from ._errors import PostpilotError

if TYPE_CHECKING:
    from typing import Protocol

    from ._generated import models
    from ._transport import AsyncTransport, SyncTransport

    class _MediaCalls(Protocol):
        """The generated methods ``upload`` calls."""

        _transport: SyncTransport

        def create_upload(
            self,
            *,
            file_name: str,
            mime_type: Any,
            file_size: int,
            alt_text: Optional[str] = ...,
            idempotency_key: Optional[str] = ...,
            headers: Optional[Mapping[str, str]] = ...,
        ) -> models.UploadResponse: ...

        def complete_upload(self, id: str, *, headers: Optional[Mapping[str, str]] = ...) -> models.MediaItem: ...

        def get(self, id: str, *, headers: Optional[Mapping[str, str]] = ...) -> models.MediaItem: ...

    class _AsyncMediaCalls(Protocol):
        """The generated methods ``upload`` calls."""

        _transport: AsyncTransport

        async def create_upload(
            self,
            *,
            file_name: str,
            mime_type: Any,
            file_size: int,
            alt_text: Optional[str] = ...,
            idempotency_key: Optional[str] = ...,
            headers: Optional[Mapping[str, str]] = ...,
        ) -> models.UploadResponse: ...

        async def complete_upload(self, id: str, *, headers: Optional[Mapping[str, str]] = ...) -> models.MediaItem: ...

        async def get(self, id: str, *, headers: Optional[Mapping[str, str]] = ...) -> models.MediaItem: ...


#: What ``upload`` takes: the bytes, a path, or a binary file object (read from where it stands).
FileInput = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes]]

POLL_SECONDS = 0.25
CHUNK = 1 << 20


@dataclass
class _Source:
    name: str
    mime_type: str
    size: int
    #: The bytes, or the open file to stream them from.
    data: Optional[bytes]
    file: Optional[IO[bytes]]
    #: The file was opened here (a path) and is closed here.
    opened: bool


def _source(file: FileInput, file_name: Optional[str], mime_type: Optional[str]) -> _Source:
    data: Optional[bytes] = None
    handle: Optional[IO[bytes]] = None
    opened = False
    if isinstance(file, (bytes, bytearray, memoryview)):
        data = bytes(file)
        size = len(data)
        name = file_name
    elif isinstance(file, (str, os.PathLike)):
        handle = open(file, "rb")  # closed once the PUT is done
        opened = True
        size = os.fstat(handle.fileno()).st_size
        name = file_name or os.path.basename(os.fspath(file))
    else:
        handle = file
        own_name = getattr(file, "name", None)
        name = file_name or (os.path.basename(own_name) if isinstance(own_name, str) else None)
        try:
            start = handle.tell()
            size = handle.seek(0, io.SEEK_END) - start
            handle.seek(start)
        except (AttributeError, OSError, ValueError):
            # Not seekable (a pipe, a socket): its bytes are read first to know their number.
            data = handle.read()
            handle = None
            size = len(data)
    if not name:
        if opened and handle:
            handle.close()
        raise ValueError("file_name is required when the file has no name")
    kind = mime_type or mimetypes.guess_type(name)[0]
    if not kind:
        if opened and handle:
            handle.close()
        raise ValueError(f"mime_type is required: {name!r} does not say its type")
    return _Source(name, kind, size, data, handle, opened)


def _put_headers(given: Mapping[str, str], size: int) -> Dict[str, str]:
    headers = dict(given)
    # A streamed body needs its length stated: an S3 address refuses a chunked PUT.
    if not any(k.lower() == "content-length" for k in headers):
        headers["Content-Length"] = str(size)
    return headers


def _checked(item: "models.MediaItem") -> "models.MediaItem":
    if item["status"] == "failed":
        raise PostpilotError(
            f"the media item failed: {item.get('error')!r}", status=0, code="media_failed", details={"media": item}
        )
    if item["status"] != "ready":
        raise PostpilotError("the media item is not ready in time", status=0, code="media_not_ready", details={"media": item})
    return item


def _put_failed(status: int) -> PostpilotError:
    return PostpilotError(f"PUT of the file answered {status}", status=status, code="upload_failed")


class MediaUploads:
    """``media.upload`` of the synchronous client."""

    def upload(
        self: "_MediaCalls",
        file: FileInput,
        *,
        file_name: Optional[str] = None,
        mime_type: Optional[str] = None,
        alt_text: Optional[str] = None,
        ready_within: float = 60.0,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> "models.MediaItem":
        """The file into the media library: create, PUT, complete, then the item once ``ready``.

        Args:
            file: The bytes, a path, or a binary file object.
            file_name: The name to keep; a path's or a file object's own name when not given.
            mime_type: The file's type; guessed from its name when not given.
            alt_text: Alternative text for the item.
            ready_within: Seconds to wait for ``ready`` after completing.
            idempotency_key: The create's Idempotency-Key; one is generated when not given.
        """
        src = _source(file, file_name, mime_type)
        try:
            started = self.create_upload(
                file_name=src.name,
                mime_type=src.mime_type,
                file_size=src.size,
                alt_text=alt_text,
                idempotency_key=idempotency_key,
                headers=headers,
            )
            put = self._transport.put_file(
                started["upload"]["url"],
                _put_headers(started["upload"]["headers"], src.size),
                src.data if src.data is not None else src.file,
            )
        finally:
            if src.opened and src.file:
                src.file.close()
        if not put.is_success:
            raise _put_failed(put.status_code)
        item = self.complete_upload(started["media"]["id"], headers=headers)
        deadline = time.monotonic() + ready_within
        while item["status"] == "pending" and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            item = self.get(item["id"], headers=headers)
        return _checked(item)


async def _chunks(handle: IO[bytes]) -> AsyncIterator[bytes]:
    while True:
        # A thread reads, so a slow disk does not hold up the event loop.
        chunk = await asyncio.get_running_loop().run_in_executor(None, handle.read, CHUNK)
        if not chunk:
            return
        yield chunk


class AsyncMediaUploads:
    """``media.upload`` of the asynchronous client."""

    async def upload(
        self: "_AsyncMediaCalls",
        file: FileInput,
        *,
        file_name: Optional[str] = None,
        mime_type: Optional[str] = None,
        alt_text: Optional[str] = None,
        ready_within: float = 60.0,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> "models.MediaItem":
        """The file into the media library: create, PUT, complete, then the item once ``ready``.

        Args:
            file: The bytes, a path, or a binary file object.
            file_name: The name to keep; a path's or a file object's own name when not given.
            mime_type: The file's type; guessed from its name when not given.
            alt_text: Alternative text for the item.
            ready_within: Seconds to wait for ``ready`` after completing.
            idempotency_key: The create's Idempotency-Key; one is generated when not given.
        """
        src = _source(file, file_name, mime_type)
        try:
            started = await self.create_upload(
                file_name=src.name,
                mime_type=src.mime_type,
                file_size=src.size,
                alt_text=alt_text,
                idempotency_key=idempotency_key,
                headers=headers,
            )
            put = await self._transport.put_file(
                started["upload"]["url"],
                _put_headers(started["upload"]["headers"], src.size),
                src.data if src.data is not None else _chunks(src.file),  # type: ignore[arg-type]
            )
        finally:
            if src.opened and src.file:
                src.file.close()
        if not put.is_success:
            raise _put_failed(put.status_code)
        item = await self.complete_upload(started["media"]["id"], headers=headers)
        deadline = time.monotonic() + ready_within
        while item["status"] == "pending" and time.monotonic() < deadline:
            await asyncio.sleep(POLL_SECONDS)
            item = await self.get(item["id"], headers=headers)
        return _checked(item)
