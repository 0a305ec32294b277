"""Judges: implementations of the :class:`~multiverse.judging.Judge` protocol.

Model judges (:class:`ModelJudge`: a template and a strict parser), deterministic
judges by name (``register_judge`` / ``get_judge``; the ``contract`` oracle is
built in as :class:`ContractJudge`, the web agent's ``state_checks`` as
:class:`StateChecks`, plain callables are wrapped as
:class:`FunctionJudge`) and panels (:class:`PanelJudge`, combining members'
severities with ``combine_panel``).  ``make_judges`` turns an experiment's
judge specs into judges.  Names resolve on first use so importing the package
stays light.
"""

from __future__ import annotations

from multiverse._lazy import lazy_exports


__all__ = [
    "ContractJudge",
    "FunctionJudge",
    "ModelJudge",
    "PanelJudge",
    "StateChecks",
    "combine_panel",
    "get_judge",
    "list_judges",
    "make_judges",
    "register_judge",
]

_EXPORTS = {
    "register_judge": "multiverse.judges.registry",
    "get_judge": "multiverse.judges.registry",
    "list_judges": "multiverse.judges.registry",
    "ContractJudge": "multiverse.judges.registry",
    "FunctionJudge": "multiverse.judges.registry",
    "combine_panel": "multiverse.judges.panel",
    "PanelJudge": "multiverse.judges.panel",
    "ModelJudge": "multiverse.judges.model",
    "make_judges": "multiverse.judges.build",
    "StateChecks": "multiverse.judges.state_checks",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
