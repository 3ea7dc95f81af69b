"""The dataset card written beside a Hugging Face dataset or Parquet export of reviewed rows.

A ``README.md`` whose YAML front matter follows the Hugging Face dataset card's metadata (``license``,
``language``, ``task_categories``, ``task_ids``, ``size_categories``, ``pretty_name``, ``tags``) and
adds a ``cfaug`` block with the facts a reader needs to trust or reproduce the data: task and labels,
sizes (rows per label and method), the source data's hash, the method and its parameters, the metric
summary (``metrics.json`` from ``cfaug evaluate``, when present) and the review summary (decisions,
annotators, agreement). The Markdown body says the same in prose and tables.

Where it goes: one card per export, so that exports into one folder never replace each other's card:
``README.md`` inside the dataset folder (``save_to_disk``) for ``hf``; ``<file name>.README.md`` beside
a Parquet file (``train.parquet.README.md``). Exporting to the same output again replaces its card.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfaug.data.io.atomic import write_text_atomic

if TYPE_CHECKING:
    from cfaug.review.export import ExportSummary
    from cfaug.review.items import ItemSet

#: first line of the body of every card cfaug writes (how a README.md of ours is recognised)
MARKER = "<!-- written by cfaug review export -->"

_TASK_IDS = {"sentiment": "sentiment-classification", "rating": "sentiment-scoring",
             "nli": "natural-language-inference", "style": "multi-class-classification"}


def size_category(n: int) -> str:
    """The Hugging Face ``size_categories`` bucket of ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "n>10M"


def card_path(output: str | os.PathLike[str], kind: str) -> Path:
    """Where the card of an export to ``output`` in format ``kind`` goes (see the module docstring)."""
    out = Path(output)
    if kind == "hf":
        return out / "README.md"
    return out.with_name(out.name + ".README.md")


def metric_summary(run_dir: Path) -> dict[str, dict[str, float | None]] | None:
    """``{group: {metric: value}}`` from ``RUN_DIR/metrics.json``; None when absent or unreadable."""
    path = run_dir / "metrics.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    out: dict[str, dict[str, float | None]] = {}
    for group, body in (data.get("groups") or {}).items() if isinstance(data, dict) else ():
        metrics = body.get("metrics") if isinstance(body, dict) else None
        out[str(group)] = {str(m.get("name")): m.get("value") for m in metrics or () if isinstance(m, dict)}
    return out or None


def card_metadata(rows: list[dict[str, Any]], items: ItemSet, summary: ExportSummary, *,
                  license: str | None) -> dict[str, Any]:
    """The YAML front matter as a dict."""
    task = items.task
    cfg = items.config
    manifest = _read_json(items.run_dir / "manifest.json") or {}
    label_col = items.columns.label
    labels = Counter(str(r.get(label_col)) for r in rows)
    surfaces = items.label_surfaces()  # the labels as the rows spell them, as sizes.by_label counts them
    methods = Counter(str(r.get("method") or "") for r in rows)
    meta: dict[str, Any] = {
        "license": license or "unknown",
        "language": ["en"],
        "task_categories": ["text-classification"],
        "task_ids": [_TASK_IDS.get(task.name, "multi-class-classification")],
        "size_categories": [size_category(len(rows))],
        "pretty_name": f"Reviewed counterfactuals ({task.name}, {cfg.get('method', 'cfaug')})",
        "tags": ["counterfactual", "data-augmentation", "human-reviewed", "cfaug"],
        "cfaug": {
            "task": task.name,
            "labels": [surfaces.get(lab, lab) for lab in task.label_space.labels],
            "columns": {"text": items.columns.text, "label": label_col, "original": items.columns.original,
                        "original_label": items.columns.original_label},
            "sizes": {"rows": len(rows), "by_label": dict(sorted(labels.items())),
                      "by_method": dict(sorted(methods.items())), "items_in_run": len(items.items)},
            "source_data": {"sha256": _plain_hash(cfg.get("input_hash") or manifest.get("input_hash")),
                            "file": cfg.get("input")},
            "method": {"name": cfg.get("method"), "parameters": cfg.get("params") or {},
                       "seed": cfg.get("seed"),
                       "cfaug_version": (manifest.get("versions") or {}).get("cfaug")},
            "metrics": metric_summary(items.run_dir),
            "review": {"decisions_exported": summary.by_decision, "annotators": summary.annotators,
                       "ties_left_out": summary.ties, "decided_otherwise": summary.not_chosen,
                       "agreement": summary.agreement, "combination": "majority of annotators; ties left out"},
        },
    }
    return meta


def render_card(rows: list[dict[str, Any]], items: ItemSet, summary: ExportSummary, *,
                license: str | None) -> str:
    """The whole README.md: YAML front matter and a Markdown body."""
    import yaml

    meta = card_metadata(rows, items, summary, license=license)
    c = meta["cfaug"]
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    lines = ["---", front.rstrip("\n"), "---", MARKER, "", f"# {meta['pretty_name']}", "",
             f"{len(rows)} counterfactual rows of a {c['task']} task (labels: {', '.join(c['labels'])}), "
             f"generated by cfaug with the method `{c['method']['name']}` and kept by people who reviewed them "
             "with `cfaug review`. Each row holds the rewrite in the text column(s), its label, the original in "
             "`original_<column>`, and `meta.review` with the annotators, their decision, when, and the edit "
             "they made to the machine's text.", "", "## Source data and method", "",
             f"- source data: `{c['source_data']['file']}` (sha256 `{c['source_data']['sha256']}`)",
             f"- method: `{c['method']['name']}`, seed {c['method']['seed']}, cfaug "
             f"{c['method']['cfaug_version'] or '(version not recorded)'}",
             f"- parameters: `{json.dumps(c['method']['parameters'], ensure_ascii=False, sort_keys=True)}`", "",
             "## Sizes", "", "| label | rows |", "|---|---|"]
    lines += [f"| {_cell(k)} | {v} |" for k, v in c["sizes"]["by_label"].items()]
    lines += ["", "| method | rows |", "|---|---|"]
    lines += [f"| {_cell(k)} | {v} |" for k, v in c["sizes"]["by_method"].items()]
    r = c["review"]
    lines += ["", "## Review", "",
              f"Decisions exported: {', '.join(f'{k} {v}' for k, v in r['decisions_exported'].items())}. "
              f"Annotators: {', '.join(r['annotators']) or 'none'}. Several annotators on one item are combined by "
              f"majority; {r['ties_left_out']} tied item(s) were left out, {r['decided_otherwise']} item(s) were "
              "decided otherwise (e.g. rejected)."]
    ag = r.get("agreement") or {}
    if ag.get("shared_items"):
        lines.append(f"Agreement on the {ag['shared_items']} item(s) decided by more than one annotator: "
                     + ", ".join(f"{name} {_num(ag.get(key))}" for name, key in (
                         ("Cohen's kappa", "cohen_kappa"), ("Fleiss' kappa", "fleiss_kappa"),
                         ("Krippendorff's alpha", "krippendorff_alpha")) if ag.get(key) is not None) + ".")
    lines += ["", "## Metrics", ""]
    if c["metrics"]:
        lines += ["Computed by `cfaug evaluate` on the run's counterfactuals before review:", "",
                  "| group | metric | value |", "|---|---|---|"]
        for group, ms in c["metrics"].items():
            lines += [f"| {_cell(group)} | {_cell(name)} | {_num(v)} |" for name, v in ms.items()]
    else:
        lines.append("No metrics: `cfaug evaluate RUN_DIR` was not run on this run directory.")
    lines += ["", "## License", "",
              f"`{license}` (as given when exporting)." if license else
              "Not given: pass `--license` to `cfaug review export` (the source data's license applies)."]
    return "\n".join(lines) + "\n"


def write_card(output: str | os.PathLike[str], kind: str, rows: list[dict[str, Any]], items: ItemSet,
               summary: ExportSummary, *, license: str | None) -> Path:
    """Write the card for an export to ``output`` (see :func:`card_path`); returns its path."""
    path = card_path(output, kind)
    write_text_atomic(path, render_card(rows, items, summary, license=license))
    return path


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _plain_hash(h: Any) -> str | None:
    if not isinstance(h, str):
        return None
    return h.split(":", 1)[1] if h.startswith("sha256:") else h


def _cell(x: Any) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _num(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)
