#!/usr/bin/python3
"""Drives headless Chromium through Debian's chromedriver for tests/cli/viewer_browser.rs.

The Rust test holds the logic (which page, which CLI command to compare with); this script only
does what a browser does and prints what it saw, as JSON on stdout:

    drive.py '{"steps": [STEP, ...]}'      (or the same JSON on stdin)

Steps (each a one-key object; every wait has a timeout, in seconds, default 30):
    {"open": URL}                                   load a page
    {"touch": PATH}                                 write PATH: the browser is up (for the caller)
    {"open_when_written": {"path": P, "timeout": S}}  wait until the caller writes a URL into P; load it
    {"fill": {"form": CSS, "fields": {NAME: VALUE}}} set named inputs/selects inside a form
    {"check": CSS}                                  click a checkbox or radio unless already checked
    {"click": CSS, "navigates": true}               click; with navigates, wait for the next page
    {"wait_text": {"css": CSS, "text": T, "timeout": S}}  until the element's text contains T
    {"text": CSS}                                   the element's textContent (exactly, for <pre>)
    {"attr": {"css": CSS, "name": ATTR}}            an attribute of the element
    {"count": CSS}                                  how many elements match
    {"url": null}                                   the current URL
    {"screenshot": PATH}                            a PNG of the page as shown (1400x1000)
    {"svg_text_overlaps": CSS}                      per svg matching (frames too): its text boxes, the pairs that overlap

Output: {"ok": bool, "results": [one value per step done], "console": [entries], "error": text}.
Any SEVERE entry in the browser's console (a script error, a refused resource, a CSP violation)
fails the step it appeared in: ok is false and the script exits 1. The driver and every Chromium
process it started are killed by PID at the end, also on failure or when the whole run passes its
limit (SIGALRM, "limit" in the input, default 240 s).
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"


class StepFailed(Exception):
    pass


class OutOfTime(Exception):
    pass


def on_alarm(_signum, _frame):
    raise OutOfTime("the browser run passed its limit")


def start(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--window-size=1400,1000", "--hide-scrollbars", "--disable-crash-reporter", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    if os.geteuid() == 0:
        # Chromium refuses to start its sandbox as root; CI runs the tests as root.
        options.add_argument("--no-sandbox")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_path=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    # A loaded 2-core CI machine (a build beside the tests) once took 30 s to render the
    # 16-system compare page at the first step: the bound is for a hang, not for speed.
    driver.set_page_load_timeout(75)
    driver.set_script_timeout(60)
    # The page itself 1400x1000 (the screenshots' size): the window is that plus its frame.
    driver.set_window_size(1400, 1000)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(2800 - inner[0], 2000 - inner[1])
    return driver, service


def descendants(root):
    """PIDs of every process below `root`, from /proc (Chromium forks a tree of helpers)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the fields after it are plain.
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


def stop(driver, service):
    """Kills chromedriver and every Chromium process below it by PID (quit() may hang)."""
    pid = service.process.pid if service and service.process else None
    tree = descendants(pid) if pid else []
    if driver is not None:
        signal.alarm(10)
        try:
            driver.quit()
        except (WebDriverException, OutOfTime, OSError):
            pass
        signal.alarm(0)
    for victim in tree + ([pid] if pid else []):
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if service and service.process:
        try:
            service.process.wait(timeout=10)
        except Exception:  # noqa: BLE001 - an end that cannot be waited for is still an end
            pass


def severe(entries):
    return [e for e in entries if e.get("level") == "SEVERE"]


def one(driver, css):
    found = driver.find_elements(By.CSS_SELECTOR, css)
    if not found:
        raise StepFailed(f"no element matches {css!r} on {driver.current_url}")
    return found[0]


def fill(driver, spec):
    form = one(driver, spec["form"])
    for name, value in spec["fields"].items():
        fields = form.find_elements(By.NAME, name)
        if not fields:
            raise StepFailed(f"the form {spec['form']!r} has no field named {name!r}")
        field = fields[0]
        if field.tag_name == "select":
            Select(field).select_by_value(value)
        else:
            field.clear()
            field.send_keys(value)
    return None


def click(driver, step):
    old = one(driver, "html")
    one(driver, step["click"]).click()
    if step.get("navigates"):
        timeout = step.get("timeout", 30)
        try:
            WebDriverWait(driver, timeout).until(lambda d: is_stale(old))
            WebDriverWait(driver, timeout).until(
                lambda d: d.execute_script("return document.readyState") == "complete")
        except TimeoutException as e:
            raise StepFailed(f"clicking {step['click']!r} led to no new page within {timeout} s") from e
    return driver.current_url


def is_stale(element):
    try:
        element.tag_name
        return False
    except WebDriverException:
        return True


def wait_text(driver, spec):
    timeout = spec.get("timeout", 30)
    seen = {"text": None}

    def has_text(d):
        found = d.find_elements(By.CSS_SELECTOR, spec["css"])
        seen["text"] = found[0].get_attribute("textContent") if found else None
        return seen["text"] is not None and spec["text"] in seen["text"]

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.2).until(has_text)
    except TimeoutException as e:
        raise StepFailed(
            f"{spec['css']!r} did not say {spec['text']!r} within {timeout} s; it said {seen['text']!r}") from e
    return seen["text"]


OVERLAPS_JS = """
return Array.from(document.querySelectorAll(arguments[0])).map(svg =>
  Array.from(svg.querySelectorAll('text')).map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height};
  }));
"""


def charts_in_frames(driver, css):
    """The text boxes of every svg matching `css`, in the page and in each of its frames (the
    compare page shows the report's charts in a sandboxed frame: WebDriver may enter it)."""
    charts = driver.execute_script(OVERLAPS_JS, css)
    for frame in driver.find_elements(By.CSS_SELECTOR, "iframe"):
        driver.switch_to.frame(frame)
        try:
            charts += driver.execute_script(OVERLAPS_JS, css)
        finally:
            driver.switch_to.default_content()
    return charts


def svg_text_overlaps(driver, css):
    """Every svg matching `css` (frames too): its text boxes as laid out, and each pair of texts
    that overlap."""
    charts = charts_in_frames(driver, css)
    boxes, overlaps, closest = 0, [], 0.0
    for chart in charts:
        shown = [b for b in chart if b["w"] > 0 and b["h"] > 0]
        boxes += len(shown)
        for i, a in enumerate(shown):
            for b in shown[i + 1:]:
                dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
                dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
                if dx <= 0.5 or dy <= 0:
                    continue
                # A text's box is its font's whole line (ascent to descent); the glyphs of two
                # stacked lines touch only when the boxes share more than a quarter of a line.
                share = dy / min(a["h"], b["h"])
                closest = max(closest, share)
                if share > 0.25:
                    overlaps.append([a["text"], b["text"]])
    return {"charts": len(charts), "boxes": boxes, "overlaps": overlaps,
            "most_shared_height": round(closest, 3)}


def open_when_written(driver, spec):
    """Loads the URL the caller writes into a file once the page exists (a run it starts after
    the browser is up)."""
    timeout = spec.get("timeout", 30)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(spec["path"]) as f:
                url = f.read().strip()
        except FileNotFoundError:
            url = ""
        if url:
            driver.get(url)
            return driver.current_url
        if time.monotonic() > deadline:
            raise StepFailed(f"no address written into {spec['path']} within {timeout} s")
        time.sleep(0.05)


def screenshot(driver, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if not driver.save_screenshot(path):
        raise StepFailed(f"no screenshot written to {path}")
    return path


def do(driver, step):
    kind = next(iter(step))
    arg = step[kind]
    if kind == "open":
        try:
            driver.get(arg)
        except TimeoutException as e:
            raise PageTimeout(f"{e.msg}; {probe(arg)}") from e
        return driver.current_url
    if kind == "touch":
        with open(arg, "w") as f:
            f.write("ready\n")
        return arg
    if kind == "open_when_written":
        return open_when_written(driver, arg)
    if kind == "fill":
        return fill(driver, arg)
    if kind == "check":
        box = one(driver, arg)
        if not box.is_selected():
            box.click()
        return box.is_selected()
    if kind == "click":
        return click(driver, step)
    if kind == "wait_text":
        return wait_text(driver, arg)
    if kind == "text":
        return one(driver, arg).get_attribute("textContent")
    if kind == "attr":
        return one(driver, arg["css"]).get_attribute(arg["name"])
    if kind == "count":
        return len(driver.find_elements(By.CSS_SELECTOR, arg))
    if kind == "url":
        return driver.current_url
    if kind == "screenshot":
        return screenshot(driver, arg)
    if kind == "svg_text_overlaps":
        return svg_text_overlaps(driver, arg)
    raise StepFailed(f"unknown step {kind!r}")


class PageTimeout(StepFailed):
    """A page that did not load in the browser's time ("Timed out receiving message from
    renderer"), with what the server answered the same request outside the browser."""


def probe(url):
    """Whether the server answers `url` outside the browser, and how fast: tells a server that
    hangs from a browser that does."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=20) as answer:
            size = len(answer.read())
        return f"the server answered the same request with {size} bytes in {time.monotonic() - start:.1f} s"
    except OSError as e:
        return f"the server did not answer the same request within {time.monotonic() - start:.1f} s: {e}"


def run(request):
    """The steps in one browser. A first page that the browser did not load while the server
    answered it (Chromium's renderer hung at its start: seen twice in some hundred sessions on a
    loaded machine) is tried once more in a fresh browser, and the report says so."""
    limit = int(request.get("limit", 240))
    start = time.monotonic()
    report = run_once(request, limit)
    error = report["error"] or ""
    if not report["ok"] and not report["results"] and "PageTimeout" in error and "server answered" in error:
        # Within the one limit the caller gave: its own bound on this script is just above it.
        retried = run_once(request, max(1, int(limit - (time.monotonic() - start))))
        retried["retried_after"] = error
        return retried
    return report


def run_once(request, limit):
    report = {"ok": False, "results": [], "console": [], "error": None}
    profile = tempfile.mkdtemp(prefix="iomatrix-chromium-")
    driver = service = None
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    try:
        driver, service = start(profile)
        for number, step in enumerate(request["steps"]):
            try:
                report["results"].append(do(driver, step))
            finally:
                report["console"].extend(driver.get_log("browser"))
            errors = severe(report["console"])
            if errors:
                raise StepFailed(f"step {number} {json.dumps(step)}: the browser's console has errors: {errors}")
        report["ok"] = True
    except (StepFailed, OutOfTime, WebDriverException, KeyError, OSError) as e:
        done = len(report["results"])
        report["error"] = f"{type(e).__name__} after {done} step(s): {e}"
    finally:
        signal.alarm(0)
        stop(driver, service)
        shutil.rmtree(profile, ignore_errors=True)
    return report


def main():
    raw = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
    try:
        request = json.loads(raw)
    except json.JSONDecodeError as e:
        print(json.dumps({"ok": False, "results": [], "console": [], "error": f"the input is not JSON: {e}"}))
        return 2
    begun = time.monotonic()
    report = run(request)
    report["seconds"] = round(time.monotonic() - begun, 2)
    print(json.dumps(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
