"""Fixtures shared by the method tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def one_torch_thread():
    """Tiny torch models train and run several times faster on one thread than on two contended ones (torch's
    worker threads spin while they wait); the previous setting is restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
