"""``chronolog explain --as html`` as a real browser draws it: headless Chromium (Debian's
chromium and chromium-driver, driven by selenium) opens the page and the assertions read the
screenshot's pixels — the timeline's bars in their colour between the axis ticks of their
interval's ends, the window a literal read, T; a click on a node folds its parts away.

Positions come from the page's own axis (its tick marks, laid out by the browser) and the
times from hand-derived answers; colours from ``explanation_page``.  Skipped when Chromium is
not installed, failed under CI (``.ci/run`` installs it)."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explaining import files

from chronolog.cli.main import main
from chronolog.core import explanation_page as page

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTH, HEIGHT = 1100, 1300


def _need(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why}; .ci/run should have installed it")
    pytest.skip(why)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        _need("chromium and chromedriver are not installed (Debian packages chromium chromium-driver)")
    try:
        from PIL import Image  # noqa: F401
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        _need(f"{exc.name} is not installed (the test extras: pip install -e '.[test]')")
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium must not fetch a browser or driver of its own
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},{HEIGHT}"]:
        options.add_argument(flag)
    drv = webdriver.Chrome(options=options, service=Service(driver))
    try:  # CSS pixels = screenshot pixels
        drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        yield drv
    finally:
        drv.quit()


def _page(tmp: Path, capsys, name: str, program: str, events: list[dict], query: str) -> str:  # noqa: ANN001
    prog, stream = files(tmp, name, program, events)
    capsys.readouterr()
    assert main(["explain", prog, "--input", stream, "--why", query, "--as", "html"]) == 0
    out = tmp / "why.html"
    out.write_text(capsys.readouterr().out)
    return out.as_uri()


def _shot(drv: Any) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(drv.get_screenshot_as_png())).convert("RGB")


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _near(got: tuple[int, ...], want: tuple[int, int, int], slack: int = 12) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(got, want))


def _tick_x(drv: Any) -> dict[str, float]:
    """The x of each axis tick (its time as the page labels it), as the browser laid it out."""
    return drv.execute_script("""
        const out = {};
        for (const t of document.querySelectorAll('#timeline line.tick')) {
          const r = t.getBoundingClientRect(); out[t.dataset.time] = r.left + r.width / 2;
        }
        return out;""")


def _row_y(drv: Any, atom: str) -> float:
    return drv.execute_script("""
        for (const g of document.querySelectorAll('#timeline g.row')) {
          if (g.dataset.atom === arguments[0]) {
            const r = g.querySelector('text.row-label').getBoundingClientRect(); return r.top + r.height / 2;
          }
        }
        return null;""", atom)


def test_the_timeline_draws_the_premises_where_they_hold(tmp_path, capsys, browser):
    # Hot(s1) holds on [0,5] (input); Alarm holds where Hot held within the last 2: on [0,7].
    # At T=6 the diamond reads [4,6], where Hot's latest point is 5.
    url = _page(tmp_path, capsys, "heat.mtl", "Alarm(X):-Diamondminus[0,2]Hot(X)\n",
                [{"interval": "[0,5]", "pred": "Hot", "args": ["s1"]}, {"t": 9}], "Alarm(s1)@6")
    browser.get(url)
    x = _tick_x(browser)
    assert {"0", "5", "6", "7"} <= set(x), x
    hot, alarm = round(_row_y(browser, "Hot(s1)")), round(_row_y(browser, "Alarm(s1)"))
    img = _shot(browser)
    blue, green, window, query = (_rgb(c) for c in (page.EVENT, page.DERIVED, page.WINDOW, page.QUERY))

    def at(time: float, y: int) -> tuple[int, ...]:
        lo = int(min(float(k) for k in x if float(k) <= time))
        x0, x1 = x[str(lo)], x[str(lo + 1)]
        return img.getpixel((round(x0 + (x1 - x0) * (time - lo)), y))

    # the input's bar: blue from 0 to 5, and not after 5 (there the diamond's window is shaded)
    for time in (0.2, 1, 2.5, 4, 4.8):
        assert _near(at(time, hot), blue), (time, at(time, hot))
    assert _near(at(5.3, hot), window) and _near(at(5.8, hot), window), (at(5.3, hot), at(5.8, hot))
    assert not _near(at(6.7, hot), window) and not _near(at(6.7, hot), blue)
    # the derived atom's bar: green on [0,7], nothing left of 0
    for time in (0.2, 3, 6.5, 6.8):
        assert _near(at(time, alarm), green), (time, at(time, alarm))
    assert not _near(img.getpixel((round(x["0"]) - 8, alarm)), green)
    # T: the dashed line at 6 crosses the rows
    column = [img.getpixel((round(x["6"]), y)) for y in range(min(hot, alarm) - 10, max(hot, alarm) + 10)]
    assert sum(_near(p, query, 30) for p in column) >= 10, column


def test_a_click_folds_a_node_and_the_negation_is_drawn(tmp_path, capsys, browser):
    program = ("slow(C) :- speed(C, V) [2], V < 30.\njam(R) :- slow(C), on(C, R), not clear(R) [1].\n"
               "on(c1, r1).\n")
    url = _page(tmp_path, capsys, "jam.lars", program,
                [{"t": 0, "pred": "speed", "args": ["c1", 20]}, {"t": 3}], "jam(r1)@2")
    browser.get(url)
    x, negated = _tick_x(browser), round(_row_y(browser, "not clear(r1) [1]"))
    speed = round(_row_y(browser, "speed(c1,20)"))
    img = _shot(browser)
    red, blue = _rgb(page.NEGATED), _rgb(page.EVENT)
    # the negated literal's window [1,2] is hatched red; nothing red before 1
    hatch = [img.getpixel((px, y)) for px in range(round(x["1"]), round(x["2"]) + 1) for y in (negated - 2, negated + 2)]
    assert sum(_near(p, red, 30) for p in hatch) > len(hatch) // 4
    assert not any(_near(img.getpixel((px, negated)), red, 30) for px in range(round(x["0"]) - 5, round(x["1"]) - 10))
    # the input event: a blue dot at 0 on its row
    assert _near(img.getpixel((round(x["0"]), speed)), blue)

    badge = _rgb("#ddf4ff")  # the event's badge, only under slow(c1)

    def badges() -> int:
        return sum(n for n, colour in _shot(browser).getcolors(WIDTH * HEIGHT) if colour == badge)

    def shown(text: str) -> bool:
        return bool(browser.execute_script("""
            for (const e of document.querySelectorAll('.text')) if (e.textContent === arguments[0]) return e.checkVisibility();
            return false;""", text))

    assert badges() > 50 and shown("input speed(c1,20) at 0")
    height = browser.execute_script("return document.body.scrollHeight")
    summary = browser.execute_script("""
        for (const s of document.querySelectorAll('summary'))
          if (s.querySelector('.text').textContent === 'slow(c1) at 2') return s;""")
    summary.click()
    assert badges() == 0 and not shown("input speed(c1,20) at 0") and shown("slow(c1) at 2")
    assert browser.execute_script("return document.body.scrollHeight") < height
    summary.click()  # and open again
    assert badges() > 50 and shown("input speed(c1,20) at 0")
    browser.find_element("id", "close-all").click()
    assert not shown("slow(c1) at 2") and shown("jam(r1) at 2")
