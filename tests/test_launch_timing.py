"""``launch.time_launches`` on a stand-in CUDA driver: each timed launch lies between its own two events.

The GPU tests run it for real when a GPU is lent; this checks, without one, what it measures: the
stand-in driver keeps a clock that each launch advances by its kernel time and each
``cuEventRecord`` reads, as the GPU's stream does.
"""

from __future__ import annotations

import statistics
from types import SimpleNamespace

import pytest

from tile_lsp.codegen import launch

SUCCESS = 0


class _Driver:
    """The driver calls ``time_launches`` makes, on a simulated stream clock (milliseconds)."""

    CUresult = SimpleNamespace(CUDA_SUCCESS=SUCCESS)

    def __init__(self, fail_record_after: int | None = None):
        self.clock = 0.0
        self.stamps: dict[int, float] = {}
        self.created: list[int] = []
        self.destroyed: list[int] = []
        self.records = 0
        self.fail_record_after = fail_record_after

    def cuCtxSynchronize(self):
        return (SUCCESS,)

    def cuEventCreate(self, flags):
        handle = len(self.created) + 1
        self.created.append(handle)
        return SUCCESS, handle

    def cuEventRecord(self, event, stream):
        self.records += 1
        if self.fail_record_after is not None and self.records > self.fail_record_after:
            return (700,)
        self.stamps[event] = self.clock
        return (SUCCESS,)

    def cuEventElapsedTime(self, start, end):
        return SUCCESS, self.stamps[end] - self.stamps[start]

    def cuEventDestroy(self, event):
        self.destroyed.append(event)
        return (SUCCESS,)

    def cuGetErrorName(self, err):
        return SUCCESS, b"CUDA_ERROR_ILLEGAL_ADDRESS"


def test_each_launch_is_timed_between_its_own_events(monkeypatch):
    cu = _Driver()
    monkeypatch.setattr(launch, "_driver", lambda: cu)
    kernel_ms = iter([9.0, 9.0, 1.0, 2.0, 3.0, 50.0, 2.5])  # two warmup launches, then five timed

    def start_one():  # the stream runs each launch for its kernel time
        cu.clock += next(kernel_ms)

    times = launch.time_launches(start_one, runs=5, warmup=2)
    assert times == [1.0, 2.0, 3.0, 50.0, 2.5]
    assert statistics.median(times) == 2.5  # one slow launch does not move the median, as it moved a mean
    assert sorted(cu.destroyed) == cu.created and len(cu.created) == 10


def test_events_are_destroyed_when_a_call_fails(monkeypatch):
    cu = _Driver(fail_record_after=3)
    monkeypatch.setattr(launch, "_driver", lambda: cu)
    with pytest.raises(launch.LaunchError, match="cuEventRecord failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        launch.time_launches(lambda: None, runs=4)
    assert sorted(cu.destroyed) == cu.created and len(cu.created) == 8
