"""Loading the verifier's rule modules while another thread is loading them.

The server's warm-up analyses a kernel in a worker thread as the process
starts, so it is often the one that imports ``tile_lsp.analysis.verify.rules``;
the first document's analysis, in another worker, must wait for every rule
rather than verify with those registered so far (which published an empty
diagnostic list for a document with errors).  Both tests slow the import of
each rule module down so that the second thread asks while the first is
importing; each runs in a fresh process, where the rules are not imported yet.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, server_env
from tests.test_server_lsp import RecordingClient, initialize, open_doc, recording_server, wait_for_publish
from tests.test_server_spec_hovers import TEXT as SPEC_TEXT

# Installs a hook on ``importlib.import_module``, which rules/__init__.py calls for each rule module.
SLOW_RULE_IMPORTS = """
import importlib
import time

_import_module = importlib.import_module

def _slow_import_module(name, package=None):
    if name.startswith("tile_lsp.analysis.verify.rules."):
        time.sleep(0.1)
    return _import_module(name, package)

importlib.import_module = _slow_import_module
"""

TWO_THREADS = SLOW_RULE_IMPORTS + """
import threading
import tile_lsp.analysis.verify.verifier as verifier

def registered():
    return sum(map(len, verifier._RULES.values())) + sum(map(len, verifier._REGION_RULES.values()))

seen = []

def second():
    verifier.load_rule_modules()
    seen.append(registered())

# the second thread asks once the first is importing the rule modules
first = threading.Thread(target=verifier.load_rule_modules)
waiting = threading.Thread(target=second)
_slow = importlib.import_module

def _start_second(name, package=None):
    if not waiting.is_alive() and not seen:
        waiting.start()
    return _slow(name, package)

importlib.import_module = _start_second
first.start()
first.join()
waiting.join()
print(seen[0], registered())
"""


def test_a_second_thread_waits_for_every_rule():
    out = subprocess.run([sys.executable, "-c", TWO_THREADS], capture_output=True, text=True, cwd=ROOT,
                         env=server_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    seen, total = map(int, out.stdout.split())
    assert total > 100
    assert seen == total


SLOW_RULES_SERVER = SLOW_RULE_IMPORTS + """
from tile_lsp.server.app import serve_stdio
serve_stdio()
"""


slow_rules_client = recording_server([sys.executable, "-c", SLOW_RULES_SERVER],
                                     "A client connected to a server whose rule modules take 0.1 s each to import.")


@pytest.mark.asyncio
async def test_first_publish_has_the_verifier_errors_while_warm_up_imports_the_rules(
        slow_rules_client: RecordingClient):
    await initialize(slow_rules_client)
    uri = "file:///spec_hovers.mlir"
    open_doc(slow_rules_client, uri, SPEC_TEXT)
    first = await wait_for_publish(slow_rules_client, uri, timeout=60.0)
    assert [d.message for d in first.diagnostics] == [
        "'nv_tileas.dot' op INT8 type is supported only on arch-conditional variants."]
