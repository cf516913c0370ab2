"""Findings: diagnostics as data (reference slug, severity, message, seen, fix, commands,
source)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

SEVERITIES = ("ok", "warning", "problem")
EXIT_CODES = {"ok": 0, "warning": 1, "problem": 2}


@dataclass(frozen=True)
class Finding:
    """One diagnostic.  `reference` is a stable slug that documentation and scripts can cite."""

    reference: str
    severity: str           # ok | warning | problem
    message: str            # what is true, in plain words
    seen: str = ""          # the facts it rests on (versions, paths, probe output)
    fix: str = ""           # the next command to run
    source: str = ""        # where the rule comes from (URL or document), for matrix rules
    detail: str = ""        # long text: a traceback, a log
    # shell commands that, run in order, make this finding go away (for how this ember was
    # installed: see tools/install.py); `fix` may name other ways in words
    commands: tuple = ()

    def __post_init__(self):
        if self.severity not in SEVERITIES:
            raise ValueError(f"finding {self.reference!r}: severity must be one of "
                             f"{', '.join(SEVERITIES)}, got {self.severity!r}")
        if isinstance(self.commands, str) or not all(isinstance(c, str)
                                                     for c in self.commands):
            raise ValueError(f"finding {self.reference!r}: commands must be a list of "
                             f"shell commands, got {self.commands!r}")
        object.__setattr__(self, "commands", tuple(self.commands))

    def to_dict(self) -> dict:
        data = asdict(self)
        data["commands"] = list(self.commands)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Finding:
        """A finding from a dict (a plugin's doctor check); unknown keys are an error."""
        known = cls.__dataclass_fields__
        extra = sorted(set(data) - set(known))
        if extra:
            raise ValueError(f"finding {data.get('reference', '?')!r}: unknown keys {extra}")
        return cls(**{k: v if k == "commands" else str(v) for k, v in data.items()})


def worst(findings) -> str:
    """The most severe severity among findings ('ok' when there are none)."""
    return max((f.severity for f in findings), key=SEVERITIES.index, default="ok")


def exit_code(findings) -> int:
    """0 when all is well, 1 with warnings, 2 with problems."""
    return EXIT_CODES[worst(findings)]
