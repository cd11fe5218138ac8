"""The service the tests meet: test/sdk-python.test.ts (in the service's repository) starts it and
passes where it is in the environment. POSTPILOT_TEST_BASE_URL is its address (without /v1);
POSTPILOT_TEST_ACCOUNTS is JSON naming an account per concern, each
``{"key", "keyId", "channelId"}``, so one test spending its key's rate limit leaves the others'
alone. Without them, the tests that need the service are skipped."""

from __future__ import annotations

import json
import os
import struct
import zlib
from typing import Any, Dict

import pytest


@pytest.fixture(scope="session")
def service() -> Dict[str, Any]:
    base_url = os.environ.get("POSTPILOT_TEST_BASE_URL")
    accounts = os.environ.get("POSTPILOT_TEST_ACCOUNTS")
    if not base_url or not accounts:
        pytest.skip("no service: POSTPILOT_TEST_BASE_URL and POSTPILOT_TEST_ACCOUNTS are not set")
    return {"base_url": base_url, "accounts": json.loads(accounts)}


def png(width: int = 16, height: int = 16) -> bytes:
    """A valid PNG: an RGB gradient, each row filtered with 'none'."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(
        b"\x00" + b"".join(bytes((x * 16 % 256, y * 16 % 256, 128)) for x in range(width)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
