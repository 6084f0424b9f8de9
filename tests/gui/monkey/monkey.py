#!/usr/bin/python3
"""A seeded monkey for the attnscope window: a random user that clicks, drags, types and presses keys.

It starts its own X server (Xvfb), starts the window as a user does (interactive, with --layout-json
FILE --layout-live so the window rewrites its layout record while it runs), and, until the time is up,
reads which controls are on screen (every button, slider, field, menu, tab and checkbox, with its
rectangle: the layout record's "controls", labelled by the texts drawn inside them) and acts on one of
them through xdotool, as a mouse and a keyboard would. The choice is random from the seed but biased:
controls acted on less often are likelier, and now and then it follows a plan that opens a window
through the menus and works it (Training Start/Step/Reset/Compare/Save, Checkpoint open of the shipped
model by typing its path, lesson Next/Previous, Export into a scratch folder, Display scale and
language). At the end it closes the window (SIGTERM closes it as its close button does) and fails when
the window died, hung, exited non-zero, or wrote a sanitizer report or an ImGui assertion.

It starts in one of nine states (--start): the first start, the Training window open, the Training
window with a run training (from the Training window it first plays REGRESSIONS, the sequences that once
broke the window), a lesson presented (F11), a checkpoint open with its Model view, Gated DeltaNet heads,
the Granite 4.0-H fixture (a Mamba-2 hybrid) open with its Model view or with the Logit lens, or gpt-oss's
fixture on a long input (its heads computed on demand and pooled).

Every action is logged (JSON lines) with its low-level steps, so a failure names its seed and the
action sequence that led to it; --replay LOG plays a log's steps again.

Only the standard library, Xvfb and xdotool are needed. Every path the monkey types lies in its
scratch folder (the window runs with HOME and the working folder there), so nothing outside it is
written.
"""
import argparse
import glob
import json
import os
import random
import signal
import subprocess
import sys
import time

MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer",
           "AddressSanitizer:DEADLYSIGNAL", "ImGui assertion failed", "Assertion `", "terminate called",
           "Segmentation fault")

KEYS = ["Return", "Escape", "Tab", "shift+Tab", "BackSpace", "Delete", "Left", "Right", "Up", "Down", "Home",
        "End", "Prior", "Next", "space", "ctrl+a", "ctrl+c", "ctrl+v", "ctrl+x", "ctrl+z", "ctrl+equal",
        "ctrl+minus", "ctrl+0", "ctrl+e", "ctrl+s", "F1", "a", "1", "KP_Add", "ctrl+KP_Subtract", "shift+Return",
        "F11", "ctrl+shift+z", "ctrl+y"]


# Start states (--start): the window's flags, and the plan played before the random actions. "training"
# opens the Training window; "training-run" also starts a run there (Start), which trains while the monkey
# goes on. Both play the regressions first. "presenting" opens lesson 6 at its step 2 (which opens the
# shipped model) and presses F11, as a teacher does; "checkpoint" opens --model with the Model view (and first
# switches heads off and on there); "linear"
# starts with Gated DeltaNet heads (attention without a softmax: signed matrices, the state's settings);
# "granite" opens the Granite 4.0-H fixture (Mamba-2 layers beside an attention layer) with the Model view;
# "lens" opens the same fixture with the Logit lens (its Mamba-2 layers: a lens, no per-head attribution);
# "long" opens gpt-oss's fixture on 2100 ids, past the stack's 2048 (issue 38 item 6): each head computed on
# demand, the Heads view's pooled heads and exact cells, the Model view's pooled thumbnails (a click on one opens its
# layer from the worker's cache; max | mean), the whole-stack views saying why.
LONG_IDS = "ids: " + " ".join(str((t * 7 + t // 13) % 64) for t in range(2100))
START_FLAGS = {"default": [], "training": ["--show-training"], "training-run": ["--show-training"],
               "presenting": ["--lesson", "6", "--step", "2"], "checkpoint": ["--show-model-view"],
               "linear": ["--kind", "gated-deltanet"], "granite": ["--show-model-view"], "lens": ["--show-lens"],
               "long": ["--text", LONG_IDS]}
GRANITE = "tests/fixtures/models/granite_hybrid_f32"  # under --source
GPT_OSS = "tests/fixtures/models/gpt_oss_dequantized_bf16"  # under --source

# Regressions: action sequences that once broke the window, played at the start of every run from the
# Training window (aimed at the live controls, so they follow the layout).
REGRESSIONS = [
    # issue 40: ImGui's MarkItemEdited assertion (imgui.cpp:3248) — the seed field took its typed text in the
    # frame the Input window's sentence box (drawn earlier in the frame) became the active item.
    [("type_in_field", "training", "seed", "16"), ("drag_tallest", "input")],
]


def texts_pool(scratch, model):
    return ["16", "0", "-1", "3", "100000", "2.5", "1e9", "abc", "", "The cat sat on the mat",
            "我喜欢篮球", "a b a b a b", "%s%n%d", "x" * 300, "12 7 3 12 7 3", "~/saved", scratch + "/out",
            "exports/fig.png", model, model + "/config.json", scratch + "/missing", "runs/monkey", "  "]


class Fail(Exception):
    pass


class Monkey:
    def __init__(self, args, seed, log_path):
        self.args = args
        self.seed = seed
        self.rng = random.Random(seed)
        self.log_path = log_path
        self.scratch = os.path.join(args.workdir, "seed-%d" % seed)
        self.layout_path = os.path.join(self.scratch, "layout.json")
        self.app_log = os.path.join(self.scratch, "app.log")
        self.counts = {}
        self.actions = 0
        self.plan = []
        self.xvfb = self.app = None
        self.origin = (0, 0)
        self.env = None
        self.last_frame = -1
        self.zh = {}
        try:
            with open(os.path.join(args.source, "assets/i18n/zh.json"), encoding="utf-8") as f:
                self.zh = json.load(f).get("strings", {})
        except (OSError, ValueError):
            pass

    # ---- the log ----------------------------------------------------------------------------------
    def log(self, entry):
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    # ---- X server and window ----------------------------------------------------------------------
    def start(self):
        os.makedirs(os.path.join(self.scratch, "home"), exist_ok=True)
        os.makedirs(os.path.join(self.scratch, "config"), exist_ok=True)
        for name in ("layout.json", "app.log"):
            if os.path.exists(os.path.join(self.scratch, name)):
                os.remove(os.path.join(self.scratch, name))
        read_fd, write_fd = os.pipe()
        self.xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1920x1080x24",
                                      "-nolisten", "tcp"], pass_fds=[write_fd], stderr=subprocess.DEVNULL)
        os.close(write_fd)
        number = b""
        deadline = time.time() + 30
        while not number.endswith(b"\n") and time.time() < deadline:
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
        os.close(read_fd)
        if not number.strip():
            raise Fail("Xvfb did not start")
        env = dict(os.environ)
        env.update({"DISPLAY": ":" + number.decode().strip(), "HOME": os.path.join(self.scratch, "home"),
                    "XDG_CONFIG_HOME": os.path.join(self.scratch, "config"), "OMP_WAIT_POLICY": "PASSIVE"})
        supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsan.supp")
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=1:handle_abort=1"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
        env["LSAN_OPTIONS"] = "suppressions=%s:print_suppressions=0" % supp
        # Mesa's software driver is loaded and unloaded by libGL: what it keeps is then reported from an
        # "<unknown module>" that no suppression can name. Loaded first, it stays (and lsan.supp names it).
        drivers = sorted(glob.glob("/usr/lib/*/dri/swrast_dri.so"))
        if drivers:
            env["LD_PRELOAD"] = drivers[0]
        self.env = env
        with open(self.app_log, "wb") as out:
            self.app = subprocess.Popen([self.args.app, "--size", self.args.size, "--layout-json", self.layout_path,
                                         "--layout-live"] + START_FLAGS[self.args.start] +
                                        (["--checkpoint", self.args.model] if self.args.start == "checkpoint" else
                                         ["--checkpoint", os.path.join(self.args.source, GRANITE)]
                                         if self.args.start in ("granite", "lens") else
                                         ["--checkpoint", os.path.join(self.args.source, GPT_OSS)]
                                         if self.args.start == "long" else []),
                                        cwd=self.scratch, env=env,
                                        stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        layout = self.wait_frame(0, timeout=self.args.start_timeout)
        if layout is None:
            raise Fail("the window showed no frame within %d s" % self.args.start_timeout)
        wid = self.xdo(["search", "--name", "^attnscope$"], capture=True).split()
        if wid:
            geometry = self.xdo(["getwindowgeometry", "--shell", wid[0]], capture=True)
            values = dict(line.split("=", 1) for line in geometry.split() if "=" in line)
            self.origin = (int(values.get("X", 0)), int(values.get("Y", 0)))
            self.wid = wid[0]
        else:
            self.wid = None

    def xdo(self, argv, capture=False):
        try:
            r = subprocess.run(["xdotool"] + argv, env=self.env, timeout=20, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            raise Fail("xdotool %s hung" % " ".join(argv))
        return r.stdout if capture else None

    def alive(self):
        return self.app is not None and self.app.poll() is None

    def read_layout(self):
        try:
            with open(self.layout_path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    # The layout once the window has drawn more than `frame` frames (None: it did not within `timeout`).
    def wait_frame(self, frame, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self.alive():
                raise Fail("the window exited (status %s)" % self.app.returncode)
            layout = self.read_layout()
            if layout is not None and layout.get("frame", -1) > frame:
                self.last_frame = layout["frame"]
                return layout
            time.sleep(0.02)
        return None

    def settle(self, frames=1, timeout=1.0):
        self.wait_frame(self.last_frame + frames - 1, timeout)

    # ---- low-level steps (window pixels), as logged and replayed -------------------------------------
    def step(self, s):
        kind = s[0]
        ox, oy = self.origin
        if kind == "move":
            self.xdo(["mousemove", str(ox + int(s[1])), str(oy + int(s[2]))])
            self.settle()
        elif kind in ("down", "up"):
            self.xdo(["mouse" + kind, str(s[1])])
            self.settle()
        elif kind == "click":
            self.xdo(["click", "--repeat", str(s[2]), "--delay", "60", str(s[1])])
            self.settle()
        elif kind == "keydown" or kind == "keyup":
            self.xdo([kind, s[1]])
            self.settle()
        elif kind == "key":
            self.xdo(["keydown", s[1]])
            self.settle()
            self.xdo(["keyup", s[1]])
            self.settle()
        elif kind == "type":
            self.xdo(["type", "--delay", "40", "--", s[1]])
            self.settle()
        elif kind == "resize":
            if self.wid:
                self.xdo(["windowsize", self.wid, str(s[1]), str(s[2])])
            self.settle(2, 3.0)
        else:
            raise ValueError("unknown step %r" % (s,))

    def act(self, what, steps, deadline):
        before = self.last_frame
        self.actions += 1
        self.log({"n": self.actions, "t": round(time.time() - self.t0, 2), "frame": before, "do": what,
                  "steps": steps})
        for s in steps:
            self.step(s)
        # The action's result on screen: two more frames, or the window still busy (ASan is slow).
        layout = self.wait_frame(self.last_frame + 1, timeout=max(1.0, min(10.0, deadline - time.time())))
        if layout is None and self.alive():
            layout = self.wait_frame(self.last_frame, timeout=self.args.hang_seconds)
            if layout is None:
                raise Fail("the window drew no frame for %d s after action %d (hung?)" % (self.args.hang_seconds,
                                                                                         self.actions))
        return layout

    # ---- what is on screen -------------------------------------------------------------------------
    @staticmethod
    def window_key(name):
        return name.split("###", 1)[1] if "###" in name else name

    def controls(self, layout):
        texts = layout.get("texts", [])
        out = []
        for c in layout.get("controls", []):
            if c["w"] < 2 or c["h"] < 2:
                continue
            label = " ".join(t["text"] for t in texts if t["window"] == c["window"] and
                             c["x"] <= t["x"] + t["w"] / 2 <= c["x"] + c["w"] and
                             c["y"] <= t["y"] + t["h"] / 2 <= c["y"] + c["h"])[:80]
            out.append(dict(c, label=label, key=(self.window_key(c["window"]), label or str(c["id"]))))
        return out

    def names(self, english):
        return {english, self.zh.get(english, english)}

    # The control labelled `labels` (its English text or the translation; whole, then as a word of it).
    def find(self, controls, labels, window=None):
        pool = [c for c in controls if window is None or window in c["key"][0]]
        for match in (lambda c, l: c["label"] == l, lambda c, l: l in c["label"].split(" "),
                      lambda c, l: l in c["label"]):
            hits = [c for c in pool if any(match(c, l) for l in labels)]
            if hits:
                return hits[0]
        return None

    def point_in(self, c, inset=3):
        x0, x1 = c["x"] + min(inset, c["w"] / 2), c["x"] + c["w"] - min(inset, c["w"] / 2)
        y0, y1 = c["y"] + min(inset, c["h"] / 2), c["y"] + c["h"] - min(inset, c["h"] / 2)
        return int(self.rng.uniform(x0, x1)), int(self.rng.uniform(y0, y1))

    def describe(self, c):
        return "%s: '%s'" % (c["key"][0], c["label"] or "#%d" % c["id"])

    # ---- plans: open a window through the menus and work it ------------------------------------------
    def plans(self):
        model, scratch = self.args.model, self.scratch
        menu = lambda m, item: [("menu", m), ("item", item)]
        open_window = {"Training": menu("menu_classroom", "Training"), "Lessons": menu("menu_classroom", "Lessons"),
                       "Checkpoint": menu("menu_windows", "Checkpoint"), "Export": menu("menu_windows", "Export…")}
        return [
            menu("menu_classroom", "Training") + [("press", "training", "Step"), ("press", "training", "Reset")],
            menu("menu_classroom", "Training") + [("press", "training", "Start"), ("sleep", 3),
                                                  ("press", "training", "Pause"), ("press", "training", "Reset")],
            menu("menu_classroom", "Training") + [("press", "training", "Compare MHA / GQA / MQA"), ("sleep", 4),
                                                  ("press", "training", "Reset")],
            menu("menu_classroom", "Training") + [("press", "training", "Step"), ("type_in", "training", "runs/m"),
                                                  ("press", "training", "Save checkpoint"),
                                                  ("press", "training", "Open in the Checkpoint window")],
            open_window["Checkpoint"] + [("type_in", "checkpoint", model), ("press", "checkpoint", "Open"),
                                         ("sleep", 2), ("press", "checkpoint", "Show the model view")],
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2),
                                         ("press", "checkpoint", "Convert to GQA / MQA"),
                                         ("press", "checkpoint", "Close")],
            open_window["Lessons"] + [("press", "lessons", "Next"), ("press", "lessons", "Next"),
                                      ("press", "lessons", "Previous"), ("press", "lessons", "Next")],
            open_window["Lessons"] + [("press", "lessons", "Choose a lesson…"), ("any", "##Combo")],
            open_window["Export"] + [("type_in", "export", scratch + "/exports/monkey.png"),
                                     ("press", "export", "Export")],
            menu("menu_display", "Dark theme") + menu("menu_display", "Light theme (projectors)"),
            [("menu", "menu_display"), ("drag_typed", "##Menu")],
            menu("menu_language", "中文") + [("any", None)] * 3 + menu("menu_language", "English"),
            menu("menu_windows", "Reset layout"),
            # Things in flight while the user goes on: a model loading, runs training, a large UI.
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"),
                                         ("press", "checkpoint", "Close"), ("any", "checkpoint")],
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2)] +
            [("view", v) for v in ("Shapes", "Rel. position 1D", "Rel. position 2D", "Convolution", "Heads")] +
            menu("menu_windows", "Model view") + [("any", None), ("any", None)],
            # The Rollout view: the flow started, cancelled or finished, the figure saved.
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2)] +
            menu("menu_windows", "Rollout") + [("press", "rollout", "Compute flow"), ("any", "rollout"),
                                               ("press", "rollout", "Cancel"), ("press", "rollout", "Save CSV"),
                                               ("any", "rollout")],
            # Token sets: a drag over the Input window's tokens (Reset layout shows the Input window), the Rollout
            # view with every query and the set.
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2)] +
            menu("menu_windows", "Reset layout") + menu("menu_windows", "Rollout") + [("drag_chips",), ("press", "rollout", "every query"), ("drag_chips",),
                                               ("press", "rollout", "Save PNG"), ("any", "rollout")],
            # Token sets in the Model view and Compare A/B: a drag over the tokens, the Model view with its strips (open,
            # then closed), Keep as A and Compare with A with the set, its difference and Save PNG; the Convolution
            # view, which says it draws no set.
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2)] +
            menu("menu_windows", "Reset layout") + [("drag_chips",)] + menu("menu_windows", "Model view") +
            [("sleep", 2)] + menu("menu_windows", "Model view") +
            [("press", "heads", "Keep as A"), ("drag_chips",), ("press", "heads", "Compare with A"), ("sleep", 1),
             ("press", "compare", "difference B − A"), ("press", "compare", "Save PNG"), ("any", "compare"),
             ("view", "Convolution"), ("any", None)],
            open_window["Training"] + [("press", "training", "Compare MHA / GQA / MQA")] +
            menu("menu_language", "中文") + [("any", "training"), ("press", "training", "Reset")] +
            menu("menu_language", "English"),
            open_window["Lessons"] + [("press", "lessons", "Choose a lesson…"), ("any", "##Combo")] +
            [("press", "lessons", "Next")] * 5 + [("any", "lessons")],
            [("key", "ctrl+equal")] * 8 + [("resize", 800, 600), ("any", None), ("any", None), ("any", None),
                                           ("key", "ctrl+0"), ("resize", 1280, 720)],
            menu("menu_file", "Open scene…") + [("type_in", "", scratch + "/scene.json"), ("key", "Return"),
                                                 ("any", None)],
            menu("menu_file", "Save scene…") + [("type_in", "", scratch + "/scene.json"), ("key", "Return"),
                                                 ("any", None)],
            menu("menu_help", "About attnscope") + [("any", None)],
            menu("menu_help", "Keys") + [("any", None)],
            # Undo and redo through the menu and the keys, around a lesson and a slider.
            open_window["Lessons"] + [("press", "lessons", "Choose a lesson…"), ("any", "##Combo"),
                                      ("press", "lessons", "Next")] + menu("menu_edit", "Undo") +
            menu("menu_edit", "Redo") + [("key", "ctrl+z")] * 3 + [("any", None), ("key", "ctrl+shift+z")],
            # Presentation mode with a lesson: the step keys, the view, and out again.
            open_window["Lessons"] + [("press", "lessons", "Choose a lesson…"), ("any", "##Combo")] +
            menu("menu_display", "Presentation") + [("key", "Next"), ("key", "Next"), ("key", "Prior"), ("key", "End"),
                                                    ("any", None), ("key", "ctrl+equal"), ("key", "Escape")],
            [("key", "F11"), ("any", None), ("key", "Right"), ("key", "F11")],
            menu("menu_windows", "Model view") + [("any", None), ("any", None)],
            # The Logit lens (issue 38): open it, then anything in it; with the shipped model it computes the lens.
            menu("menu_windows", "Logit lens") + [("any", "lens"), ("any", "lens"), ("any", None)],
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2)] +
            menu("menu_windows", "Logit lens") + [("press", "lens", "Direct logit attribution"), ("any", "lens"),
                                                  ("press", "lens", "Logit lens"), ("any", "lens")],
            # Why a head attends (issue 38): a right-click on a cell of the Heads view, its menu's item, the panel's
            # saves, then anything in the panel and another cell while it is open.
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2),
                                         ("view", "Heads"), ("cell", 3),
                                         ("press", None, "Why does this head attend here?"), ("sleep", 1),
                                         ("press", "qk_panel", "Save CSV"), ("press", "qk_panel", "Save SVG"),
                                         ("any", "qk_panel"), ("cell", 3),
                                         ("press", None, "Why does this head attend here?"), ("any", "qk_panel")],
            # A long input's Model view (pooled thumbnails): a click opens that layer in the Heads view, then its max |
            # mean (elsewhere the thumbnail opens the head and the two presses find nothing).
            menu("menu_windows", "Model view") + [("sleep", 2), ("thumb", 1), ("press", "heads", "mean"),
                                                  ("press", "heads", "max")],
            # Heads switched off in the Model view (a click in its ablation mode, a right-click), then undone.
            open_window["Checkpoint"] + [("press", "checkpoint", "Open the shipped induction model"), ("sleep", 2)] +
            menu("menu_windows", "Model view") + [("press", "model_view", "Click switches heads off"), ("thumb", 1),
                                                  ("thumb", 3), ("press", "model_view", "set to its mean"),
                                                  ("key", "ctrl+z"), ("press", "model_view", "Restore all heads"),
                                                  ("thumb", 3), ("key", "ctrl+z")],
            menu("menu_windows", "Shapes beside the view") + [("any", None)],
            menu("menu_classroom", "Head analysis") + [("any", None), ("any", None)],
            menu("menu_classroom", "KV-cache calculator") + [("any", None), ("any", None)],
            open_window["Training"] + [("press", "training", "Start"), ("sleep", 2), ("press", "training", "Step"),
                                       ("press", "training", "Pause"), ("press", "training", "Step"),
                                       ("press", "training", "Start"), ("press", "training", "Reset")],
            [("key", "ctrl+equal"), ("key", "ctrl+equal"), ("any", None), ("key", "ctrl+0")],
            [("resize", 800, 600), ("any", None), ("any", None), ("resize", 1920, 1080), ("any", None),
             ("resize", 1280, 720)],
        ]

    # One step of the current plan as an action (None: it cannot be done on this screen; the plan ends).
    def plan_action(self, item, controls):
        kind = item[0]
        if kind == "menu":
            titles = self.menu_titles(item[1])
            c = next((c for c in controls if c["window"] == "##MainMenuBar" and c["label"] in titles), None)
            return ("open menu %s" % item[1], [("move",) + self.point_in(c), ("click", 1, 1)]) if c else None
        if kind == "item":
            c = self.find([c for c in controls if c["window"].startswith("##Menu")], self.names(item[1]))
            return ("menu item %s" % self.describe(c), [("move",) + self.point_in(c), ("click", 1, 1)]) if c else None
        if kind == "press":
            c = self.find(controls, self.names(item[2]), item[1])
            return ("press %s" % self.describe(c), [("move",) + self.point_in(c), ("click", 1, 1)]) if c else None
        if kind == "type_in":
            fields = [c for c in controls if c["typed"] and item[1] in c["key"][0]]
            if not fields:
                return None
            c = max(fields, key=lambda c: c["w"])
            return ("type %r into %s" % (item[2], self.describe(c)),
                    [("move",) + self.point_in(c), ("click", 1, 1), ("key", "ctrl+a"), ("type", item[2]),
                     ("key", "Return")])
        if kind == "type_in_field":  # the field labelled item[2] in window item[1]: click, type, no Return
            c = self.find([c for c in controls if c["typed"]], self.names(item[2]), item[1])
            if c is None:
                return None
            x, y = int(c["x"] + min(12, c["w"] / 4)), int(c["y"] + c["h"] / 2)  # the box, left of its label
            return ("type %r into %s" % (item[3], self.describe(c)), [("move", x, y), ("click", 1, 1), ("type", item[3])])
        if kind == "drag_tallest":  # press and drag inside the tallest typed control of a window (a text box)
            fields = [c for c in controls if c["typed"] and item[1] in c["key"][0]]
            if not fields:
                return None
            c = max(fields, key=lambda c: c["h"])
            x, y = int(c["x"] + c["w"] * 0.3), int(c["y"] + c["h"] * 0.3)
            return ("drag inside %s" % self.describe(c),
                    [("move", x, y), ("down", 1), ("move", int(c["x"] + c["w"] * 0.6), y),
                     ("move", int(c["x"] + c["w"] * 0.8), int(c["y"] + c["h"] * 0.5)), ("up", 1)])
        if kind == "drag_typed":
            fields = [c for c in controls if c["typed"] and c["window"].startswith(item[1])]
            if not fields:
                return None
            c = self.rng.choice(fields)
            return self.drag_across(c)
        if kind == "any":
            pool = [c for c in controls if item[1] is None or item[1] in c["window"]]
            return self.click_control(self.rng.choice(pool)) if pool else None
        if kind == "key":
            return ("key %s" % item[1], [("key", item[1])])
        if kind == "view":
            c = self.find([c for c in controls if c["window"] == "##MainMenuBar"], self.names(item[1]))
            return ("view %s" % self.describe(c), [("move",) + self.point_in(c), ("click", 1, 1)]) if c else None
        if kind == "resize":
            return ("resize the window to %dx%d" % (item[1], item[2]), [("resize", item[1], item[2])])
        if kind == "sleep":
            return ("wait %d s" % item[1], [])
        if kind == "thumb":  # a Model view thumbnail (the layout record's "thumbs"), clicked with button item[1]
            thumbs = [t for t in self.layout.get("thumbs", []) if t["w"] > 4 and t["h"] > 4]
            if not thumbs:
                return None
            t = self.rng.choice(thumbs)
            x, y = int(t["x"] + t["w"] / 2), int(t["y"] + t["h"] / 2)
            return ("click %d on thumbnail %d.%d" % (item[1], t["layer"], t["head"]), [("move", x, y), ("click", item[1], 1)])
        if kind == "drag_chips":  # press on one token chip of the Input window, release on another: a token set
            chips = [w for name, w in self.layout.get("widgets", {}).items()
                     if name.startswith("input.token.") and w["w"] > 2 and w["h"] > 2]
            if len(chips) < 2:
                return None
            a, b = self.rng.sample(chips, 2)
            at = lambda w: (int(w["x"] + w["w"] / 2), int(w["y"] + w["h"] / 2))
            return ("drag over the token chips", [("move",) + at(a), ("down", 1), ("move",) + at(b), ("up", 1)])
        if kind == "cell":  # a cell of a Heads view heatmap (the layout record's "heads"), clicked with button item[1]
            heads = [h for h in self.layout.get("heads", []) if h["w"] > 4 and h["h"] > 4 and h.get("cell", 0) > 0]
            if not heads:
                return None
            h = self.rng.choice(heads)
            shown = max(1, int(h["w"] / h["cell"]))
            q, k = self.rng.randrange(shown), self.rng.randrange(shown)
            x, y = int(h["x"] + (k + 0.5) * h["cell"]), int(h["y"] + (q + 0.5) * h["cell"])
            return ("click %d on head %d's cell %d,%d" % (item[1], h["head"], q, k), [("move", x, y), ("click", item[1], 1)])
        raise ValueError(item)

    def menu_titles(self, menu_id):
        english = {"menu_file": "File", "menu_windows": "Windows", "menu_classroom": "Classroom",
                   "menu_language": "Language · 语言", "menu_display": "Display", "menu_help": "Help",
                   "menu_edit": "Edit"}[menu_id]
        return self.names(english)

    # ---- random actions --------------------------------------------------------------------------------
    def click_control(self, c):
        x, y = self.point_in(c)
        r = self.rng.random()
        if c["typed"] and r < 0.35:
            text = self.rng.choice(texts_pool(self.scratch, self.args.model))
            return ("ctrl+click %s, type %r" % (self.describe(c), text),
                    [("move", x, y), ("keydown", "ctrl"), ("click", 1, 1), ("keyup", "ctrl"), ("key", "ctrl+a"),
                     ("type", text), ("key", self.rng.choice(["Return", "Return", "Escape", "Tab"]))])
        if c["typed"] and r < 0.6:
            return self.drag_across(c)
        if r < 0.08:
            return ("right-click %s" % self.describe(c), [("move", x, y), ("click", 3, 1)])
        if r < 0.16:
            return ("double-click %s" % self.describe(c), [("move", x, y), ("click", 1, 2)])
        return ("click %s" % self.describe(c), [("move", x, y), ("click", 1, 1)])

    def drag_across(self, c):
        x, y = self.point_in(c)
        x2 = int(self.rng.uniform(c["x"] - 40, c["x"] + c["w"] + 40))
        return ("drag %s" % self.describe(c),
                [("move", x, y), ("down", 1), ("move", (x + x2) // 2, y), ("move", x2, y), ("up", 1)])

    def random_action(self, layout, controls):
        r = self.rng.random()
        width, height = layout.get("width", 1280), layout.get("height", 720)
        windows = [w for w in layout.get("windows", []) if w["w"] > 10 and w["h"] > 10]
        if controls and r < 0.62:
            weights = [1.0 / (1 + self.counts.get(c["key"], 0)) ** 2 for c in controls]
            c = self.rng.choices(controls, weights)[0]
            self.counts[c["key"]] = self.counts.get(c["key"], 0) + 1
            return self.click_control(c)
        if windows and r < 0.74:
            w = self.rng.choice(windows)
            corner = self.rng.random() < 0.4
            x, y = (int(w["x"] + w["w"] - 3), int(w["y"] + w["h"] - 3)) if corner else \
                   (int(self.rng.uniform(w["x"] + 5, w["x"] + w["w"] - 5)), int(w["y"] + 6))
            x2, y2 = int(self.rng.uniform(0, width)), int(self.rng.uniform(0, height))
            return ("drag the %s of %s" % ("corner" if corner else "title", self.window_key(w["title"])),
                    [("move", x, y), ("down", 1), ("move", (x + x2) // 2, (y + y2) // 2), ("move", x2, y2),
                     ("up", 1)])
        if r < 0.82:
            x, y = int(self.rng.uniform(0, width)), int(self.rng.uniform(0, height))
            x2, y2 = x + int(self.rng.uniform(-200, 200)), y + int(self.rng.uniform(-200, 200))
            return ("drag at %d,%d" % (x, y), [("move", x, y), ("down", 1), ("move", x2, y2), ("up", 1)])
        if r < 0.88:
            x, y = int(self.rng.uniform(0, width)), int(self.rng.uniform(0, height))
            button = self.rng.choice([4, 5])
            return ("wheel %s at %d,%d" % ("up" if button == 4 else "down", x, y),
                    [("move", x, y), ("click", button, self.rng.randint(1, 4))])
        if r < 0.95:
            key = self.rng.choice(KEYS)
            return ("key %s" % key, [("key", key)])
        text = self.rng.choice(texts_pool(self.scratch, self.args.model))
        return ("type %r" % text, [("type", text)])

    def next_action(self, layout):
        self.layout = layout  # what "thumb" and "cell" plan steps aim at
        controls = self.controls(layout)
        while self.plan:
            item = self.plan.pop(0)
            if item[0] == "sleep":
                return ("wait %d s" % item[1], []), item[1]
            a = self.plan_action(item, controls)
            if a is not None:
                return a, 0
            self.plan = []  # not on this screen: give up the plan
        if self.rng.random() < 0.2:
            self.plan = list(self.rng.choice(self.plans()))
            return self.next_action(layout)
        return self.random_action(layout, controls), 0

    # ---- a run -------------------------------------------------------------------------------------
    def run(self, seconds):
        self.t0 = time.time()
        self.log({"seed": self.seed, "seconds": seconds, "size": self.args.size, "start": self.args.start,
                  "app": self.args.app, "scratch": self.scratch})
        try:
            self.start()
            deadline = self.t0 + seconds
            layout = self.read_layout()
            if self.args.start.startswith("training"):
                self.plan = [item for r in REGRESSIONS for item in r]
                if self.args.start == "training-run":  # the run after them: a run locks the settings
                    self.plan += [("press", "training", "Start"), ("sleep", 2)]
            elif self.args.start == "presenting":
                self.plan = [("sleep", 2), ("key", "F11"), ("key", "Next"), ("key", "Next")]
            elif self.args.start == "checkpoint":  # heads switched off and on in its Model view first
                self.plan = [("sleep", 2), ("press", "model_view", "Click switches heads off"), ("thumb", 1),
                             ("thumb", 3), ("thumb", 1), ("key", "ctrl+z")]
            while time.time() < deadline:
                (what, steps), pause = self.next_action(layout)
                layout = self.act(what, steps, deadline) or self.read_layout()
                if pause:
                    time.sleep(pause)
                    layout = self.read_layout()
        except Fail as e:
            return self.finish(str(e))
        return self.finish(None)

    def replay(self, entries):
        self.t0 = time.time()
        try:
            self.start()
            for e in entries:
                if "steps" in e:
                    print("replay %d: %s" % (e["n"], e["do"]), flush=True)
                    self.act(e["do"], [tuple(s) for s in e["steps"]], time.time() + 10)
        except Fail as e:
            return self.finish(str(e))
        return self.finish(None)

    # Closes the window, then looks at how it ended. Returns the failure (None: passed).
    def finish(self, failure):
        if self.app is not None:
            if self.app.poll() is None:
                self.app.send_signal(signal.SIGTERM)
                try:
                    self.app.wait(timeout=self.args.exit_timeout)
                except subprocess.TimeoutExpired:
                    os.killpg(self.app.pid, signal.SIGKILL)
                    self.app.wait()
                    failure = failure or "the window did not close within %d s of SIGTERM" % self.args.exit_timeout
            status = self.app.returncode
            if status != 0 and not failure:
                failure = "the window exited with status %d" % status
        if self.xvfb is not None:
            self.xvfb.terminate()
            try:
                self.xvfb.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.xvfb.kill()
        report = ""
        try:
            with open(self.app_log, encoding="utf-8", errors="replace") as f:
                report = f.read()
        except OSError:
            pass
        found = [m for m in MARKERS if m in report]
        if found and not failure:
            failure = "the window's output has %s" % ", ".join(repr(m) for m in found)
        self.log({"result": "fail" if failure else "pass", "reason": failure, "actions": self.actions,
                  "seconds": round(time.time() - self.t0, 1)})
        if failure:
            sys.stderr.write("monkey seed %d: FAILED after %d actions: %s\n  actions: %s\n  window output: %s\n"
                             % (self.seed, self.actions, failure, self.log_path, self.app_log))
            tail = report[-6000:]
            if tail:
                sys.stderr.write("---- end of the window's output ----\n%s\n" % tail)
        else:
            print("monkey seed %d: %d actions in %.0f s, no crash, no sanitizer report, no assertion"
                  % (self.seed, self.actions, time.time() - self.t0), flush=True)
        return failure


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.abspath(os.path.join(here, "../../.."))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--app", required=True, help="the attnscope executable (the sanitized build's)")
    p.add_argument("--workdir", required=True, help="scratch folder: one seed-N folder per seed, and the logs")
    p.add_argument("--seconds", type=float, default=120, help="acting time per seed (default 120)")
    p.add_argument("--seeds", default="1", help="comma-separated seeds (default 1)")
    p.add_argument("--size", default="1280x720", help="window size (default 1280x720)")
    p.add_argument("--start", default="default", choices=sorted(START_FLAGS),
                   help="start state: default, training (the Training window open), training-run (and a run "
                        "started; the Training starts play the regressions first), presenting (lesson 6 from step 2, "
                        "F11), checkpoint (--model open, with the Model view), linear (Gated DeltaNet heads), granite "
                        "(the Granite 4.0-H fixture open, with the Model view), lens (the same with the Logit lens) or "
                        "long (gpt-oss's fixture on 2100 ids: heads computed on demand)")
    p.add_argument("--model", default=os.path.join(source, "assets/models/induction"),
                   help="the checkpoint folder the monkey types into the Checkpoint window")
    p.add_argument("--source", default=source, help=argparse.SUPPRESS)
    p.add_argument("--start-timeout", type=int, default=120, help=argparse.SUPPRESS)
    p.add_argument("--hang-seconds", type=int, default=60, help=argparse.SUPPRESS)
    p.add_argument("--exit-timeout", type=int, default=120, help=argparse.SUPPRESS)
    p.add_argument("--replay", help="play the steps of this action log again (its seed's scratch folder is reused)")
    args = p.parse_args()
    args.app = os.path.abspath(args.app)
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)
    if args.replay:
        with open(args.replay, encoding="utf-8") as f:
            entries = [json.loads(line) for line in f if line.strip()]
        seed = entries[0].get("seed", 0)
        args.size = entries[0].get("size", args.size)
        args.start = entries[0].get("start", args.start)
        log = os.path.join(args.workdir, "replay-seed%d.log" % seed)
        if os.path.exists(log):
            os.remove(log)
        return 1 if Monkey(args, seed, log).replay(entries) else 0
    failures = 0
    for seed in [int(s) for s in args.seeds.split(",") if s.strip()]:
        log = os.path.join(args.workdir, "monkey-seed%d%s.log" % (seed, "" if args.start == "default" else "-" + args.start))
        if os.path.exists(log):
            os.remove(log)
        if Monkey(args, seed, log).run(args.seconds):
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
