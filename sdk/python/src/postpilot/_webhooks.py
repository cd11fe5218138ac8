"""Webhook deliveries verified as Standard Webhooks (https://www.standardwebhooks.com) sign them:
``webhook-id``, ``webhook-timestamp`` and ``webhook-signature`` over the raw body, with the
endpoint's secret (``whsec_…``), a timestamp more than five minutes off refused. Built on the
``standardwebhooks`` package."""

from __future__ import annotations

import binascii
from typing import Any, Dict, Iterable, Mapping, Tuple, Union

import standardwebhooks
from typing_extensions import TypedDict

#: Headers as a mapping (a dict, ``http.server``'s message, ``httpx.Headers``, a framework's
#: headers) or as ``(name, value)`` pairs.
HeaderSource = Union[Mapping[str, str], Iterable[Tuple[str, str]]]


class WebhookEvent(TypedDict):
    """A delivery's event, as the API sends it: its type (``post.published``, …), when, and its data."""

    type: str
    timestamp: str
    data: Dict[str, Any]


class WebhookVerificationError(standardwebhooks.WebhookVerificationError):
    """The delivery's signature, timestamp or headers are not right."""


def _plain(headers: HeaderSource) -> Dict[str, str]:
    pairs = headers.items() if hasattr(headers, "items") else headers
    out: Dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        # A header sent twice reads as its values space-separated, as a signature list is.
        out[key] = f"{out[key]} {value}" if key in out else value
    return out


def verify_webhook(body: Union[str, bytes], headers: HeaderSource, secret: str) -> WebhookEvent:
    """The event of a delivery whose signature is the endpoint's.

    ``body`` exactly as received (the raw text or bytes, not parsed and serialized again). Raises
    ``WebhookVerificationError`` when the signature, the timestamp or the headers are not right.
    """
    try:
        return standardwebhooks.Webhook(secret).verify(body, _plain(headers))  # type: ignore[no-any-return]
    except WebhookVerificationError:
        raise
    except (standardwebhooks.WebhookVerificationError, ValueError, binascii.Error) as err:
        raise WebhookVerificationError(str(err)) from err


class WebhookVerification:
    """``webhooks.verify`` of both clients (no request: the signature is checked here)."""

    verify = staticmethod(verify_webhook)
