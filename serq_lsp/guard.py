"""Robustness: a feature that fails is logged and answered with an error; the server goes on."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

log = logging.getLogger("serq_lsp")

F = TypeVar("F", bound=Callable[..., Any])


def guarded(handler: F) -> F:
    """Wrap a feature `handler(ls, *args)`: an exception in it is logged (to the log and the
    client's output) and becomes a JSON-RPC internal error, never a crash."""

    @functools.wraps(handler)
    def wrapper(ls: Any, *args: Any) -> Any:
        try:
            return handler(ls, *args)
        except JsonRpcException:
            raise
        except Exception as error:
            message = f"serq-lsp: {handler.__name__} failed: {type(error).__name__}: {error}"
            log.exception(message)
            try:
                ls.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=message)
                )
            except Exception:  # the client may be gone; the log has it
                pass
            raise JsonRpcInternalError(message) from error

    return wrapper  # type: ignore[return-value]
