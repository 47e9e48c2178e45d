"""Schedules for long runs: which steps a profiler records, as torch.profiler.schedule."""

from __future__ import annotations

import os
import socket
import warnings
from typing import Optional

from paddle_prof.paths import check_path

# What a step is to a schedule.
SKIP = "skip"        # before the first cycle (skip_first), or after the last
WAIT = "wait"        # nothing is recorded
WARMUP = "warmup"    # recorded, then dropped as the active steps begin
ACTIVE = "active"    # recorded; the cycle's last active step ends in a report


class schedule:  # noqa: N801 (the API's name, as torch.profiler.schedule)
    """After ``skip_first`` steps, cycles of ``wait`` + ``warmup`` + ``active`` steps,
    ``repeat`` times (0: until the block ends). Each cycle's active steps make one Report.

    Example::

        sched = paddle_prof.schedule(wait=1, warmup=1, active=3, repeat=2)
        with paddle_prof.profiler('CPU', schedule=sched) as prof:
            for batch in data:
                train_step(batch)
                prof.step()
        prof.reports   # two Reports of three steps each
    """

    def __init__(self, *, wait: int = 0, warmup: int = 0, active: int = 1, repeat: int = 0,
                 skip_first: int = 0) -> None:
        for name, value, least in (("wait", wait, 0), ("warmup", warmup, 0),
                                   ("active", active, 1), ("repeat", repeat, 0),
                                   ("skip_first", skip_first, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"schedule(): {name} must be an int >= {least}; got {value!r}")
        self.wait = wait
        self.warmup = warmup
        self.active = active
        self.repeat = repeat
        self.skip_first = skip_first

    def action(self, step: int) -> str:
        """What step ``step`` (0-based, counted from the block's start) is."""
        if step < self.skip_first:
            return SKIP
        step -= self.skip_first
        period = self.wait + self.warmup + self.active
        if self.repeat > 0 and step >= period * self.repeat:
            return SKIP
        within = step % period
        if within < self.wait:
            return WAIT
        return WARMUP if within < self.wait + self.warmup else ACTIVE

    def cycle(self, step: int) -> int:
        """The cycle step ``step`` belongs to (0-based)."""
        return (step - self.skip_first) // (self.wait + self.warmup + self.active)

    def last_active(self, step: int) -> bool:
        """Whether ``step`` is the last active step of its cycle."""
        period = self.wait + self.warmup + self.active
        return (self.action(step) == ACTIVE and
                (step - self.skip_first) % period == period - 1)

    def __repr__(self) -> str:
        return (f"paddle_prof.schedule(wait={self.wait}, warmup={self.warmup}, "
                f"active={self.active}, repeat={self.repeat}, skip_first={self.skip_first})")


def cycle_path(profile_path: str, cycle: int) -> str:
    """``profile_path`` for ``cycle``: its ``{cycle}`` filled in, else ``.cycle<N>`` before
    the extension (``p.json`` -> ``p.cycle0.json``)."""
    if "{cycle}" in profile_path:
        return profile_path.replace("{cycle}", str(cycle))
    root, extension = os.path.splitext(profile_path)
    return f"{root}.cycle{cycle}{extension}"


class save_to:  # noqa: N801 (the API's name, as torch's tensorboard_trace_handler)
    """``on_trace_ready`` that writes each cycle's trace, summary and HTML report to
    ``<directory>/<name or host.pid>.cycle<N>.json`` (and ``.summary.json``, ``.html``)."""

    def __init__(self, directory: str, name: Optional[str] = None) -> None:
        self.directory = check_path(directory, "save_to directory")
        self.name = (check_path(name, "save_to name") if name is not None
                     else f"{socket.gethostname()}.{os.getpid()}")
        # A directory that can never be made is refused here, not at a cycle's end.
        existing = os.path.abspath(self.directory)
        while not os.path.exists(existing):
            existing = os.path.dirname(existing)
        if not os.path.isdir(existing):
            raise ValueError(f"save_to: {existing!r} is not a directory, so "
                             f"{self.directory!r} cannot be one")

    def profile_path(self, cycle: int, ending: bool = True) -> Optional[str]:
        """The cycle's trace path, its directory made. Where that cannot be made, a cycle
        that is `ending` gets None and a warning (its files never stop the program); one
        that begins gets the path all the same, as the directory may be there by its end."""
        path = os.path.join(self.directory, f"{self.name}.cycle{cycle}.json")
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as e:
            if not ending:
                return path
            warnings.warn(f"paddle_prof.save_to: cycle {cycle}'s files are not written: "
                          f"cannot make the directory {self.directory!r} ({e}); its report "
                          "is kept in prof.reports", RuntimeWarning, stacklevel=3)
            return None
        return path

    def __call__(self, report: object) -> None:
        """The files are written as the cycle's report is built; nothing is left to do."""

    def __repr__(self) -> str:
        return f"paddle_prof.save_to({self.directory!r}, name={self.name!r})"
