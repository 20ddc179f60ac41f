"""The pages that explain each finding rule: ``docs/rules/<rule>.md``.

In the repository they live in ``docs/rules`` to be read there; the wheel ships the same files as the data
package ``clperf.rules`` (``pyproject.toml`` maps it to ``docs/rules``), so an installed clperf finds them
without a checkout. ``clperf check --format sarif`` puts a page into each rule's help; the language server
links a finding to its page.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

# a checkout (or an editable install made before clperf.rules existed): the folder beside the package
_CHECKOUT = Path(__file__).resolve().parents[2] / "docs" / "rules"


def rules_folder() -> Path | None:
    """The folder holding the rule pages: the installed ``clperf.rules``, else the checkout's docs/rules."""
    spec = find_spec("clperf.rules")  # a folder of data, no code: a namespace package
    packaged = [Path(p) for p in (spec.submodule_search_locations or [])] if spec is not None else []
    return next((f for f in (*packaged, _CHECKOUT) if f.is_dir()), None)


def rule_page(rule: str) -> Path | None:
    """``<rule>.md`` in ``rules_folder()``, or None when no page exists for ``rule``."""
    folder = rules_folder()
    page = folder / f"{rule}.md" if folder is not None and "/" not in rule else None
    return page if page is not None and page.is_file() else None


def rule_page_text(rule: str) -> str | None:
    """The page's Markdown, or None when there is none (or it cannot be read)."""
    page = rule_page(rule)
    try:
        return page.read_text(encoding="utf-8") if page is not None else None
    except OSError:
        return None
