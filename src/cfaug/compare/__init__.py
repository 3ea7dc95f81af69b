"""cfaug compare: every method on the same rows, scored by one judge, ranked in one report.

``cfaug.compare`` is this package and also a function: calling it, ``cfaug.compare(data, methods=...,
output=DIR, **options)``, runs the comparison and returns the summary as a pandas DataFrame (see
:func:`cfaug.api.compare`). The modules:

- :mod:`~cfaug.compare.sample`: the rows every method works on (with ``--limit``, the sample ``cfaug augment --limit`` takes);
- :mod:`~cfaug.compare.runs`: one resumable run directory per method, skipped with a reason when the method
  needs what was not given;
- :mod:`~cfaug.compare.scoring`: one independent judge and the metric suite for every method, time and LLM
  usage;
- :mod:`~cfaug.compare.downstream`: with test sets, the downstream harness with bootstrap intervals and
  paired tests;
- :mod:`~cfaug.compare.summary`: ``summary.json`` and ``summary.md``, ranked;
- :mod:`~cfaug.compare.pipeline`: all of it in order;
- :mod:`~cfaug.compare.report`: ``report.html``.

Importing the package imports none of them.
"""

from __future__ import annotations

import sys
import types
from typing import Any


def compare(data: Any, methods: Any = None, output: Any = None, *, report: bool = True, **options: Any) -> Any:
    """Run the comparison and return the summary as a pandas DataFrame (see :func:`cfaug.api.compare`)."""
    from cfaug.compare.pipeline import (
        options_from_mapping,
        run_compare,
        summary_frame,
        write_report,
    )

    if output is None:
        from cfaug.config import ConfigError

        raise ConfigError("cfaug.compare needs output=DIR, the folder the comparison is written to")
    options.setdefault("progress", False)
    opts = options_from_mapping(methods, output, dict(options))
    result = run_compare(data, opts, log=None if opts.progress else (lambda m: None))
    if report:
        write_report(result.out_dir, (lambda m: print(m, file=sys.stderr)))
    frame = summary_frame(result.summary)
    frame.attrs["out_dir"] = str(result.out_dir)
    frame.attrs["exit_code"] = result.exit_code
    return frame


class _CallableModule(types.ModuleType):
    """The package, callable as :func:`compare`."""

    def __call__(self, data: Any, methods: Any = None, output: Any = None, **options: Any) -> Any:
        return compare(data, methods, output, **options)


sys.modules[__name__].__class__ = _CallableModule
