"""postpilot: the Postpilot API's client (README.md)."""

from ._client import AsyncPostpilot, Postpilot
from ._errors import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    PostpilotError,
    RateLimitError,
    ServerError,
    ValidationError,
)
from ._generated import models
from ._generated.operations import OPERATIONS
from ._transport import NOT_GIVEN, NotGiven, Operation, retry_after_seconds
from ._version import __version__
from ._webhooks import WebhookEvent, WebhookVerificationError, verify_webhook

__all__ = [
    "APIConnectionError",
    "AsyncPostpilot",
    "AuthenticationError",
    "ConflictError",
    "NOT_GIVEN",
    "NotFoundError",
    "NotGiven",
    "OPERATIONS",
    "Operation",
    "PermissionDeniedError",
    "Postpilot",
    "PostpilotError",
    "RateLimitError",
    "ServerError",
    "ValidationError",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "models",
    "retry_after_seconds",
    "verify_webhook",
]
