"""The JSON-RPC protocol of the server: every request answered, refusals are not internal errors.

pygls 2.x (``pygls.protocol.json_rpc.JsonRPCProtocol``) validates a message
while ``json.loads`` decodes it (``structure_message`` is the object hook).
When the parameters of a request fail validation (a negative line or
character, ``"params": null``), it raises ``JsonRpcInvalidParams`` from
inside ``json.loads``: the reading loop logs the traceback and the message id
is lost, so the request is never answered and the client waits forever
(issue 16).  :class:`TileProtocol` answers such a request with the JSON-RPC
error ``InvalidParams`` (-32602; ``InternalError`` -32603 is kept for a
message that is not a request), and logs the malformed message at warning
level with the reason.  A notification that fails validation has nobody to
answer: it is logged at warning level and dropped.

pygls also logs every error answer of a handler with ``logger.exception``
and reports it as a server error; tile-lsp's handlers raise
:class:`pygls.exceptions.JsonRpcException` only to refuse a request
deliberately (``RequestFailed``, a rename that cannot be done), so those are
answered and logged at info level, without a traceback.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)


class _Dropped:
    """A message already answered or dropped while it was decoded; ``handle_message`` ignores it."""

    jsonrpc = None


DROPPED = _Dropped()


def _reason(exc: BaseException) -> str:
    """One line saying why a message failed validation (cattrs' nested causes flattened)."""
    try:
        from cattrs.errors import ClassValidationError

        if isinstance(exc, ClassValidationError):
            from cattrs import transform_error

            return "; ".join(transform_error(exc)) or str(exc)
    except Exception:  # an older cattrs: the plain message will do
        pass
    return f"{type(exc).__name__}: {exc}"


class TileProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, answering every request, with refusals logged as refusals."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Decode one JSON object of a message (``json.loads`` object hook).

        Returns the typed message, ``data`` itself for a nested object, or
        :data:`DROPPED` for a message that failed validation: a request gets
        the error answer ``InvalidParams`` at once (it has an ``id`` and a
        ``method``), a notification or a response is logged and dropped.
        """
        if "jsonrpc" not in data:
            return data
        try:
            if "id" in data:
                if "error" in data:
                    from pygls.protocol.json_rpc import ResponseErrorMessage

                    return self._converter.structure(data, ResponseErrorMessage)
                if "method" in data:
                    from pygls.protocol.json_rpc import JsonRPCRequestMessage

                    request_type = self.get_message_type(data["method"]) or JsonRPCRequestMessage
                    return self._converter.structure(data, request_type)
                from pygls.protocol.json_rpc import JsonRPCResponseMessage

                response_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
                return self._converter.structure(data, response_type)
            from pygls.protocol.json_rpc import JsonRPCNotification

            notification_type = self.get_message_type(data.get("method", "")) or JsonRPCNotification
            return self._converter.structure(data, notification_type)
        except Exception as exc:  # a malformed message: never a traceback, a request is answered
            return self._reject(data, exc)

    def _reject(self, data: dict[str, Any], exc: Exception) -> _Dropped:
        method = data.get("method")
        msg_id = data.get("id")
        reason = _reason(exc)
        if method is not None and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            logger.warning("invalid parameters of request %r (id %r), answered InvalidParams: %s",
                           method, msg_id, reason)
            error = JsonRpcInvalidParams(f"Invalid params of {method}: {reason}")
            try:
                self._send_response(msg_id, error=error.to_response_error())
            except Exception:  # the connection may be gone
                logger.debug("could not answer request %r", msg_id, exc_info=True)
        elif method is not None:
            logger.warning("invalid notification %r dropped: %s", method, reason)
        else:
            logger.warning("malformed message dropped: %s", reason)
        return DROPPED

    def handle_message(self, message: Any) -> None:
        """Dispatch ``message``; a :data:`DROPPED` one was already dealt with while decoding."""
        if message is DROPPED or isinstance(message, _Dropped):
            return
        if not hasattr(message, "jsonrpc"):  # valid JSON but no JSON-RPC message at all
            logger.warning("message without 'jsonrpc' dropped: %.200r", message)
            return
        super().handle_message(message)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Answer a request; a deliberate refusal is no server error (pygls logs it as one)."""
        if not future.cancelled():
            exc = future.exception()
            if isinstance(exc, JsonRpcException):
                self._request_futures.pop(msg_id, None)
                logger.info("request %r refused: %s", msg_id, exc)
                self._send_response(msg_id, error=exc.to_response_error())
                return
        super()._send_handler_result(future, msg_id=msg_id)
