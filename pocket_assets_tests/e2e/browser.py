"""Headless Debian Chromium through Selenium and Debian's chromedriver, cut off from the outside.

No browser is ever downloaded: the binaries are the system packages `chromium`
and `chromium-driver`. The profile is fresh and private to the test, background
networking and component updates are off, and every host name except the
loopback resolves to nothing, so the only server the browser can reach is the
test's webserver.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from pocket_assets_tests.e2e.system_browser import CHROMEDRIVER_BINARY, CHROMIUM_BINARY

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--window-size=1600,1200",
)

WAIT_SECONDS = 90


@contextmanager
def headless_chromium(profile_dir: Path) -> Iterator[Browser]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM_BINARY)
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile_dir}"):
        options.add_argument(flag)
    # Both binaries given explicitly: Selenium Manager (which downloads browsers) is never consulted.
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER_BINARY)), options=options)
    try:
        yield Browser(driver)
    finally:
        driver.quit()


@dataclass(frozen=True)
class Browser:
    """The few things the tests do with a page: open, wait for text, click, hover, type, screenshot."""

    driver: webdriver.Chrome

    def open(self, url: str) -> None:
        self.driver.get(url)

    def page_text(self) -> str:
        try:
            return self.driver.find_element("tag name", "body").text
        except StaleElementReferenceException:  # React replaced the body while we read it
            return ""

    def wait_for_texts(self, texts: Sequence[str], timeout: float = WAIT_SECONDS) -> str:
        """Wait until every text is visible on the page; fail naming the ones that never showed."""
        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(
                lambda _: all(text in self.page_text() for text in texts)
            )
        except TimeoutException:
            shown = self.page_text()
            missing = [text for text in texts if text not in shown]
            raise AssertionError(
                f"{self.driver.current_url}: not shown after {timeout:.0f} s: {missing}\npage text:\n{shown[:3000]}"
            ) from None
        return self.page_text()

    def wait_for_any(self, texts: Sequence[str], timeout: float = WAIT_SECONDS) -> str:
        """Wait until one of the texts is visible (a page that says one thing or another once loaded)."""
        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(
                lambda _: any(text in self.page_text() for text in texts)
            )
        except TimeoutException:
            raise AssertionError(
                f"{self.driver.current_url}: none of {list(texts)} shown after {timeout:.0f} s\n"
                f"page text:\n{self.page_text()[:3000]}"
            ) from None
        return self.page_text()

    def click(self, xpath: str, timeout: float = WAIT_SECONDS) -> None:
        WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(
            expected_conditions.element_to_be_clickable(("xpath", xpath))
        ).click()

    def elements(self, xpath: str) -> list[WebElement]:
        return self.driver.find_elements("xpath", xpath)

    def scroll_to(self, xpath: str) -> None:
        """Bring the first matching element to the top of the window (for a screenshot of what follows it)."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'start'});", self.elements(xpath)[0])

    def hover(self, xpath: str, timeout: float = WAIT_SECONDS) -> None:
        """Move the mouse over the first matching element (a tag whose popover says more)."""
        element = WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(
            expected_conditions.visibility_of_element_located(("xpath", xpath))
        )
        ActionChains(self.driver).move_to_element(element).perform()

    def type_into(self, xpath: str, text: str, timeout: float = WAIT_SECONDS) -> None:
        """Click the first matching input and type `text` into it."""
        field = WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(
            expected_conditions.element_to_be_clickable(("xpath", xpath))
        )
        field.click()
        field.send_keys(text)

    def press_escape(self) -> None:
        ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not self.driver.save_screenshot(str(path)):
            raise AssertionError(f"could not save screenshot {path}")
        return path
