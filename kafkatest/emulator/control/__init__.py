"""The emulator's one request-level control primitive, like kfake's `ControlKey`.

Every decoded request passes the server's `FaultHook` (`server/faults.py`) before
its handler runs; `InjectedFaults` (`hook.py`) is the hook that holds `Rule`s
(`rules.py`: latency, a dropped connection, an error answer, a lost
acknowledgement, per API and optionally per topic and partition) and the pause
gate. `checks.py` refuses a rule that could never fire, with `InvalidFault`.

This is the place for anything that intercepts or observes requests from outside
the broker's rules (request hooks, a request log, the broker clock's control):
it sits above `server` and `state` and may use both; neither imports it. The
harness (`kafkatest.faults`) builds its `Faults` API on top of it.
"""

from kafkatest.emulator.control.errors import InvalidFault
from kafkatest.emulator.control.hook import InjectedFaults
from kafkatest.emulator.control.rules import KINDS, Rule, api_key, api_name, error_code

__all__ = ["KINDS", "InjectedFaults", "InvalidFault", "Rule", "api_key", "api_name", "error_code"]
