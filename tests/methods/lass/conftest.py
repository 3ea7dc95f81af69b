"""Fixtures of the LASS tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread_per_module():
    """Every module here trains or runs tiny torch models, its module-scoped fixtures included: on one thread
    they run several times faster than on two contended ones (torch's worker threads spin while they wait);
    the previous setting is restored after the module."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
