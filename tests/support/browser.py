"""The report in a real browser: Debian's headless Chromium (scripts/install-deps.sh) driven by
Playwright, offline."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"
# Offline and quiet: no GPU, no updates, no sync, no first-run page.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, for as long as the block runs."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Browser, path: Path, width: int) -> tuple[Page, list[str]]:
    """The page of ``path`` in a window ``width`` px wide (900 high), and what goes wrong in
    it, as it happens: console errors, script errors, failed requests and every request
    that would leave the machine (all but ``file:`` and ``data:``)."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:"))
            else problems.append(f"network request: {r.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, problems
