"""The API's errors as classes: every refusal carries the error body's ``code``, ``message`` and
``details``, the HTTP status and the request id (the ``X-Request-Id`` answered; quote it when
reporting a problem). One class per kind a caller handles differently; the names leave Python's
own ``PermissionError`` and ``ConnectionError`` unshadowed."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Type


class PostpilotError(Exception):
    """What the API refused (or a request that got no answer)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str,
        details: Optional[Dict[str, Any]] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        #: The HTTP status; 0 when no answer came (the network).
        self.status = status
        #: The error body's ``code`` (``validation_failed``, ``not_found``, …).
        self.code = code
        self.details = details
        #: The request's id, as the API answered it in ``X-Request-Id``.
        self.request_id = request_id

    def __str__(self) -> str:
        where = f", request {self.request_id}" if self.request_id else ""
        return f"{self.message} ({self.status} {self.code}{where})"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(message={self.message!r}, status={self.status}, code={self.code!r}, "
            f"details={self.details!r}, request_id={self.request_id!r})"
        )


class AuthenticationError(PostpilotError):
    """401: the key is missing, unknown, expired or revoked."""


class PermissionDeniedError(PostpilotError):
    """403: the key lacks a scope, the plan a feature, or the member a role."""


class NotFoundError(PostpilotError):
    """404."""


class ConflictError(PostpilotError):
    """409: the resource is not in a state that allows this, or an Idempotency-Key was reused with another body."""


class ValidationError(PostpilotError):
    """413 or 422: ``fields`` names each field refused (``{"path", "message"}``)."""

    @property
    def fields(self) -> List[Dict[str, str]]:
        return list((self.details or {}).get("fields") or [])


class RateLimitError(PostpilotError):
    """429, after the client's retries: ``retry_after`` is when the API said to come back (seconds)."""

    retry_after: Optional[float] = None


class ServerError(PostpilotError):
    """503 (a service the API depends on is briefly unreachable) and other 5xx, after the client's retries."""

    retry_after: Optional[float] = None


class APIConnectionError(PostpilotError):
    """The request never got an answer (a refused connection, a reset, a timeout)."""


_BY_STATUS: Mapping[int, Type[PostpilotError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: ValidationError,
    422: ValidationError,
    429: RateLimitError,
}


def error_of(status: int, body: Any, request_id: Optional[str], retry_after: Optional[float] = None) -> PostpilotError:
    """The error of an answer that is not a success."""
    found = body.get("error") if isinstance(body, dict) else None
    e: Dict[str, Any] = found if isinstance(found, dict) else {}
    code = e["code"] if isinstance(e.get("code"), str) else f"http_{status}"
    message = e["message"] if isinstance(e.get("message"), str) else f"HTTP {status}"
    details = e.get("details") if isinstance(e.get("details"), dict) else None
    kind = _BY_STATUS.get(status) or (ServerError if status >= 500 else PostpilotError)
    err = kind(message, status=status, code=code, details=details, request_id=request_id)
    if isinstance(err, (RateLimitError, ServerError)):
        err.retry_after = retry_after
    return err
