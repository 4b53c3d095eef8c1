"""Which pages RENDER_JS=auto renders, decided per script signature; and the setting."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from govsi.render.decide import MAX_RESAMPLE_DOUBLINGS, RenderPlanner, render_mode
from govsi.render.engine import browser_args, find_chromium


@pytest.mark.parametrize(
    ("value", "mode"), [(None, "auto"), ("", "auto"), ("OFF", "off"), (" always ", "always")]
)
def test_render_mode(value: str | None, mode: str) -> None:
    assert render_mode(value) == mode


def test_render_mode_refuses_unknown_values() -> None:
    with pytest.raises(ValueError, match="RENDER_JS"):
        render_mode("sometimes")


def test_find_chromium(tmp_path: Path) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    assert find_chromium(str(fake)) is None  # not executable
    os.chmod(fake, 0o755)
    assert find_chromium(str(fake)) == str(fake)


@pytest.mark.parametrize(
    ("value", "args"),
    [
        (None, []),
        ("", []),
        ("--lang=sl,--mute-audio", ["--lang=sl", "--mute-audio"]),
        ('["--user-agent=a, b", "--lang=sl"]', ["--user-agent=a, b", "--lang=sl"]),
        (["--disable-gpu", " "], ["--disable-gpu"]),
    ],
)
def test_browser_args(value: object, args: list[str]) -> None:
    assert browser_args(value) == args


def test_a_signature_whose_samples_gain_nothing_is_fetched_plainly_and_sampled_again() -> None:
    planner = RenderPlanner(samples=3, resample_every=5)
    for i in range(3):
        assert planner.plan("cms") == "sample"
        assert planner.learn("cms", gained=False) == ("plain" if i == 2 else None)
    assert [planner.plan("cms") for _ in range(5)] == ["plain"] * 5
    assert planner.plan("cms") == "sample"  # now and then, in case the site changed
    assert planner.learn("cms", gained=False) is None  # still plain: nothing to log
    assert planner.plan("cms") == "plain"


def test_each_resample_that_agrees_doubles_the_wait_up_to_a_limit() -> None:
    planner = RenderPlanner(samples=1, resample_every=5)
    planner.plan("cms")
    planner.learn("cms", gained=False)
    waits = []
    for _ in range(MAX_RESAMPLE_DOUBLINGS + 3):
        plans = []
        while not plans or plans[-1] != "sample":
            plans.append(planner.plan("cms"))
        waits.append(len(plans) - 1)
        planner.learn("cms", gained=False)
    assert waits == [5, 10, 20, 40, 80, 80, 80]
    # A signature shared by 10 000 pages is sampled again 6 times, not 50.
    planner = RenderPlanner(samples=3, resample_every=200)
    for _ in range(3):
        planner.plan("cms")
        planner.learn("cms", gained=False)
    samples = 0
    for _ in range(10_000):
        if planner.plan("cms") == "sample":
            samples += 1
            planner.learn("cms", gained=False)
    assert samples == 6
    # The wait grows when a resample goes out: renders come back late, plain pages do not.
    planner = RenderPlanner(samples=1, resample_every=5)
    planner.plan("s")
    planner.learn("s", gained=False)
    plans = [planner.plan("s") for _ in range(5 + 1 + 10 + 1)]  # no resample is back yet
    assert plans == ["plain"] * 5 + ["sample"] + ["plain"] * 10 + ["sample"]


def test_a_late_sample_that_gained_nothing_does_not_undo_rendering() -> None:
    planner = RenderPlanner(samples=2)
    assert [planner.plan("app"), planner.plan("app")] == ["sample", "sample"]
    assert planner.learn("app", gained=True) == "render"
    assert planner.learn("app", gained=False) is None
    assert planner.plan("app") == "render"


def test_a_signature_whose_sample_gains_is_rendered_and_others_are_not() -> None:
    planner = RenderPlanner(samples=3)
    assert planner.plan("app") == "sample"
    assert planner.learn("app", gained=True) == "render"
    assert [planner.plan("app") for _ in range(10)] == ["render"] * 10
    # Another signature (say the same host's article pages) is learned on its own.
    assert planner.plan("articles") == "sample"


def test_pages_that_come_before_the_samples_are_in_wait_for_them() -> None:
    # A fast host: its pages come before the first rendered sample is back.
    planner = RenderPlanner(samples=3)
    plans = [planner.plan("fast") for _ in range(7)]
    assert plans == ["sample"] * 3 + ["wait"] * 4
    assert not planner.decided("fast")
    planner.learn("fast", gained=True)  # then a sample shows rendering matters
    assert planner.decided("fast")
    assert planner.plan("fast") == "render"  # what the waiting pages are told


def test_a_resample_that_gains_turns_a_plain_signature_to_rendering() -> None:
    planner = RenderPlanner(samples=1, resample_every=2)
    planner.plan("s")
    planner.learn("s", gained=False)
    assert [planner.plan("s") for _ in range(3)] == ["plain", "plain", "sample"]
    assert planner.learn("s", gained=True) == "render"
    assert planner.plan("s") == "render"


def test_samples_that_fail_to_render_end_in_plain_fetching() -> None:
    planner = RenderPlanner(samples=2)
    for _ in range(2):
        assert planner.plan("broken") == "sample"
        planner.given_up("broken")
    assert planner.plan("broken") == "plain"


def test_a_sample_never_rendered_for_want_of_room_is_asked_of_a_later_page() -> None:
    planner = RenderPlanner(samples=2)
    assert [planner.plan("big") for _ in range(3)] == ["sample", "sample", "wait"]
    # The second sample found no room among the waiting pages: nothing is learnt from
    # it, and the next page (a waiting one, planning again) is sampled in its place.
    planner.returned("big")
    assert not planner.decided("big")
    assert planner.plan("big") == "sample"
    planner.learn("big", gained=False)
    planner.learn("big", gained=False)
    assert planner.decided("big") and planner.plan("big") == "plain"
