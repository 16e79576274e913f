"""Issue 18's small things seen in Debian's chromium: on a 390 x 844 phone the ladder's rating
column is on screen; the replay viewer's Trick list is filled at step 0 and seeks from there."""

from __future__ import annotations

from typing import Any

import pytest
from web_data import Site

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
VIEWER_READY = ".septet-viewer[data-steps]"


def test_the_ladders_rating_column_is_on_screen_on_a_390_px_phone(
    served: tuple[str, Site], page: Any
) -> None:
    """Every row's rating (and its interval) ends inside the 390 px viewport without scrolling,
    the hostile long bot name included."""
    url, _ = served
    page.set_viewport_size(PHONE)
    page.goto(f"{url}/ladders/oh-hell/")
    header = page.locator("table.standings th.col-rating").bounding_box()
    cells = [cell.bounding_box() for cell in page.locator("table.standings td.col-rating").all()]
    assert len(cells) == 3
    for box in [header, *cells]:
        assert box is not None and box["width"] > 0 and box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"], box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.locator("table.standings td.col-rating strong").first.is_visible()


def test_the_viewers_trick_list_is_filled_at_step_0_and_seeks_from_there(
    served: tuple[str, Site], page: Any
) -> None:
    url, site = served
    page.goto(f"{url}/matches/{site.match.pk}/")
    page.wait_for_selector(VIEWER_READY, timeout=10_000)
    page.keyboard.press("Home")
    viewer = page.locator(".septet-viewer")
    assert viewer.get_attribute("data-step") == "0"
    tricks = page.locator('select[data-role="seek-trick"] option')
    assert tricks.count() > 1 and tricks.first.text_content() == "Trick 1"
    page.locator('select[data-role="seek-trick"]').select_option("1")
    page.wait_for_function("document.querySelector('.septet-viewer').dataset.step !== '0'")
    assert int(viewer.get_attribute("data-step") or 0) > 0
