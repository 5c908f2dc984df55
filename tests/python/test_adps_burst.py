"""pandalab.adps.queueing_burst: ADPS's queueing experiment at another
burst size keeps the offered load (the fifo/ideal ratio's dependence on
the burst is what bench/adps-experiments.py --burst measures)."""

import pytest

from pandaovs import cli
from pandalab import adps


def _arg(args, name):
    return args[args.index(name) + 1]


def test_default_burst_is_the_experiment():
    assert adps.queueing_burst(40) == adps.QUEUEING["client"]


@pytest.mark.parametrize("burst", [1, 10, 160, 400])
def test_load_stays_the_same(burst):
    args = adps.queueing_burst(burst)
    assert int(_arg(args, "--burst")) == burst
    # 10 ms of work per request: burst x 10 ms / interval is the load.
    interval = cli.parse_duration(_arg(args, "--interval"))
    assert burst * 0.010 / interval == pytest.approx(0.8)
    # Everything else is the experiment's.
    for name in ("--mix", "--requests", "--connections"):
        assert _arg(args, name) == _arg(adps.QUEUEING["client"], name)
    assert adps.QUEUEING["client"][adps.QUEUEING["client"]
                                   .index("--burst") + 1] == "40"


def test_bad_burst_is_refused():
    with pytest.raises(ValueError, match="burst"):
        adps.queueing_burst(0)
