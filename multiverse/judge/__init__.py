"""Judges: implementations of the :class:`~multiverse.core.judgment.Judge` protocol.

Model judges (:class:`ModelJudge`: a template and a strict parser), deterministic
judges by name (``register_judge`` / ``get_judge``; the ``contract`` oracle is
built in as :class:`ContractJudge`, the web agent's ``state_checks`` as
:class:`StateChecks`, plain callables are wrapped as
:class:`FunctionJudge`) and panels (:class:`PanelJudge`, combining members'
severities with ``combine_panel``) and pairwise judges (:class:`PairwiseJudge`: each reply
against a reference model's reply to the same context).  ``make_judges`` turns an experiment's
judge specs into judges.  Names resolve on first use so importing the package
stays light.
"""

from __future__ import annotations

from multiverse.core.lazy import lazy_exports

__all__ = [
    "ContractJudge",
    "FunctionJudge",
    "ModelJudge",
    "PairwiseJudge",
    "PanelJudge",
    "StateChecks",
    "combine_panel",
    "get_judge",
    "list_judges",
    "make_judges",
    "register_judge",
]

_EXPORTS = {
    "register_judge": "multiverse.judge.registry",
    "get_judge": "multiverse.judge.registry",
    "list_judges": "multiverse.judge.registry",
    "ContractJudge": "multiverse.judge.registry",
    "FunctionJudge": "multiverse.judge.registry",
    "combine_panel": "multiverse.judge.panel",
    "PanelJudge": "multiverse.judge.panel",
    "ModelJudge": "multiverse.judge.model",
    "PairwiseJudge": "multiverse.judge.pairwise",
    "make_judges": "multiverse.judge.build",
    "StateChecks": "multiverse.judge.state_checks",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
