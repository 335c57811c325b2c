"""Talking to a standalone emulator's control interface (what `kafkatest fault` uses)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from kafkatest.errors import BrokerError


class ControlClient:
    """Calls ``http://<address>/faults...``; errors come back as `BrokerError`."""

    def __init__(self, address: str, timeout_s: float = 120.0) -> None:
        self.base = f"http://{address}/faults"
        self.timeout_s = timeout_s

    def call(self, action: str, **params: Any) -> Any:
        if action == "list":
            return self._send("GET", self.base)
        if action == "clear":
            return self._send("DELETE", self.base)
        if action == "remove":
            if not isinstance(params.get("id"), int):  # the URL has no place for anything else
                raise BrokerError("remove: give the fault's id (--id N, as `list` shows it)")
            return self._send("DELETE", f"{self.base}/{params['id']}")
        return self._send("POST", f"{self.base}/{action}", params)

    def _send(self, method: str, url: str, params: dict[str, Any] | None = None) -> Any:
        data = None if params is None else json.dumps(params).encode()
        request = urllib.request.Request(
            url, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error", exc.reason)
            except ValueError:
                message = exc.reason
            raise BrokerError(f"the control interface refused: {message}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise BrokerError(f"cannot reach the control interface at {url}: {exc}") from None
        return answer.get("result")
