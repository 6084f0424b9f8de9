// The manual is current by test (issue 35): the generated parts of docs/ are what scripts/gen-docs.sh
// makes from the built program; no relative link or image of README.md and docs/**/*.md is dead; every
// `attnscope …` command line of their ```sh / ```bash blocks runs, on a copy of the repository, with
// exit 0 or the exit its trailing `# exit N` comment states. ```text blocks are not run (the
// convention for commands that need a downloaded model or a file the repository does not hold).
//
// Commands that open the window run under a private X server (tests/xvfb_run.sh) when the build has
// the window, is not the sanitized one and Xvfb is installed, else they are skipped with a message. A
// window command without --screenshot gets `--screenshot <scratch>/doc-window.png`, so it draws its
// first frames and exits instead of waiting for a user; one that runs for minutes (training to the
// end) belongs in a ```text block. Each test first feeds its checker a broken page, so a checker
// that can no longer fail fails here.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "docs/docs_check.h"
#include "run_cli.h"
#include "test_paths.h"
#include "test_tmp.h"

using namespace attnscope::test;
using namespace attnscope::test::docs;
namespace fs = std::filesystem;

namespace {

const fs::path root = ATTNSCOPE_SOURCE_DIR;

std::string joined_lines(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Runs `script` (sh syntax) in `cwd`, bounded by `seconds`; returns its exit code, its output in `out`.
int run_shell(const std::string& script, const fs::path& cwd, int seconds, std::string& out) {
  static int counter = 0;
  const fs::path dir = test_tmp() / "docs_capture";
  fs::create_directories(dir);
  const fs::path file = dir / ("cmd" + std::to_string(counter) + ".sh");
  const fs::path log = dir / ("log" + std::to_string(counter++) + ".txt");
  {
    std::ofstream f(file);
    f << script << "\n";
  }
  const std::string cmd = "cd " + shell_quote(cwd.string()) + " && timeout -k 5 " + std::to_string(seconds) + " sh " +
                          shell_quote(file.string()) + " >" + shell_quote(log.string()) + " 2>&1 </dev/null";
  const int code = exit_code_of(std::system(cmd.c_str()));
  out = slurp(log);
  return code;
}

// The program's subcommands, read off `attnscope --help` (CLI11's SUBCOMMANDS section).
std::set<std::string> program_subcommands() {
  const CliRun r = run_cli("--help");
  REQUIRE(r.exit_code == 0);
  std::set<std::string> names;
  bool in = false;
  for (const std::string& line : lines_of(r.out)) {
    if (line.rfind("SUBCOMMANDS:", 0) == 0 || line.rfind("Subcommands:", 0) == 0) {
      in = true;
      continue;
    }
    if (in && !line.empty() && line[0] != ' ') break;
    if (in && line.find_first_not_of(' ') != std::string::npos) {
      std::stringstream ss(line);
      std::string name;
      ss >> name;
      names.insert(name);
    }
  }
  REQUIRE_MESSAGE(!names.empty(), "no SUBCOMMANDS section in attnscope --help:\n" << r.out);
  return names;
}

// A copy of the repository's files (not its build folders or .git) in which the commands run, so
// that their --out paths write into the copy, never into the repository.
fs::path repository_copy() {
  const fs::path copy = test_tmp() / "docs_repo";
  fs::remove_all(copy);
  fs::create_directories(copy);
  for (const auto& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("build", 0) == 0 || name[0] == '.') continue;
    fs::copy(e.path(), copy / name, fs::copy_options::recursive);
  }
  return copy;
}

bool built_with_window() {
  static const bool yes = run_cli("--help").out.find("--screenshot") != std::string::npos;
  return yes;
}

// The sanitized build runs the window only under the monkey test (tests/gui/monkey/), as the GUI suite.
bool window_runs_here() {
  static const bool yes =
      !ATTNSCOPE_SANITIZED_BUILD && built_with_window() && std::system("command -v Xvfb >/dev/null 2>&1") == 0;
  return yes;
}

// Runs one documented command in `cwd`; returns what is wrong with it, or "".
std::string command_problem(const DocCommand& c, const std::set<std::string>& subcommands, const fs::path& cwd,
                            int& skipped) {
  const bool window = subcommand_of(c, subcommands).empty();
  // Training to the end (the shipped model's 1000 steps) takes minutes under ASan: the sanitized build
  // leaves `train` to the Release build's run of this test (its own suite, tests_train, runs sanitized).
  if (ATTNSCOPE_SANITIZED_BUILD && subcommand_of(c, subcommands) == "train") {
    ++skipped;
    return "";
  }
  const bool xvfb_wrapper = c.wrapper.find("xvfb-run") != std::string::npos;
  // The built program, also for a second `attnscope` on the same line (`… && attnscope …`).
  std::string script = "PATH=" + shell_quote(fs::path(ATTNSCOPE_BIN).parent_path().string()) +
                       ":\"$PATH\"; export PATH; " + (xvfb_wrapper ? std::string() : c.wrapper) +
                       shell_quote(ATTNSCOPE_BIN) + c.args;
  if (window) {
    if (!window_runs_here()) {
      ++skipped;
      return "";
    }
    if (c.args.find("--screenshot") == std::string::npos)
      script += " --screenshot " + shell_quote((test_tmp() / "doc-window.png").string());
    script = "bash " + shell_quote((root / "tests" / "xvfb_run.sh").string()) + " --screen 3840x2160x24 sh -c " +
             shell_quote(script);
  }
  std::string out;
  const int code = run_shell(script, cwd, 120, out);
  if (code == c.expected_exit) return "";
  return c.page + ":" + std::to_string(c.line) + ": `" + c.text + "` exited " + std::to_string(code) +
         ", the page says " + std::to_string(c.expected_exit) + "\n" + out.substr(0, 2000);
}

}  // namespace

TEST_CASE("docs: the generated parts of the manual are what scripts/gen-docs.sh makes from the program") {
  // docs/command-line.md and the families and real checkpoints tables of docs/real-models.md; the script's
  // --check diffs.
  // The page is made from the window build, whose top-level --help also lists the window's options.
  if (!built_with_window()) {
    MESSAGE("this attnscope has no window: its --help is not the one docs/command-line.md is made from; not compared");
    return;
  }
  std::string out;
  const int code =
      run_shell("ATTNSCOPE_BIN=" + shell_quote(ATTNSCOPE_BIN) + " bash scripts/gen-docs.sh --check", root, 120, out);
  CHECK_MESSAGE(code == 0, "scripts/gen-docs.sh --check exited " << code << " (run scripts/gen-docs.sh to update):\n"
                                                                 << out);

  // The check itself fails on a page that differs: a copy of the two pages, one line changed.
  const fs::path copy = fresh_dir("docs_gen_check");
  fs::create_directories(copy / "docs");
  fs::create_directories(copy / "scripts");
  for (const char* f : {"docs/command-line.md", "docs/real-models.md", "scripts/gen-docs.sh"})
    fs::copy_file(root / f, copy / f);
  // and the real configs whose table real-models.md holds (`families --checkpoints`)
  fs::create_directories(copy / "tests" / "fixtures");
  fs::copy(root / "tests" / "fixtures" / "real-configs", copy / "tests" / "fixtures" / "real-configs", fs::copy_options::recursive);
  {
    std::ofstream f(copy / "docs" / "command-line.md", std::ios::app);
    f << "a line the program did not write\n";
  }
  const int broken =
      run_shell("ATTNSCOPE_BIN=" + shell_quote(ATTNSCOPE_BIN) + " bash scripts/gen-docs.sh --check", copy, 120, out);
  CHECK(broken == 1);
  CHECK_MESSAGE(out.find("-a line the program did not write") != std::string::npos, out);
}

TEST_CASE("docs: every relative link and image of README.md and docs/ exists, every anchor names a heading") {
  // The checker on a page with a dead link, a missing image and a wrong anchor.
  const fs::path scratch = fresh_dir("docs_links_selftest");
  {
    std::ofstream f(scratch / "page.md");
    f << "# A page\n\n## Second part · 中文\n\n[ok](page.md#a-page) [ok](#second-part--中文) ![img](gone.png)\n"
         "[dead](missing.md) [anchor](page.md#no-such-heading)\n```text\n[in code](not-checked.md)\n```\n"
         "`[in a code span](not-checked.md)` <img src=\"also-gone.png\"> [web](https://example.org/x)\n";
  }
  const std::vector<std::string> self = link_problems(scratch / "page.md", scratch);
  CHECK_MESSAGE(self.size() == 4, joined_lines(self));
  for (const char* bad : {"gone.png", "missing.md", "#no-such-heading", "also-gone.png"}) {
    CAPTURE(bad);
    CHECK(joined_lines(self).find(bad) != std::string::npos);
  }

  const std::vector<fs::path> pages = manual_pages(root);
  REQUIRE(pages.size() >= 2);  // README.md and docs/command-line.md at least
  std::vector<std::string> problems;
  size_t links = 0;
  for (const fs::path& page : pages) {
    links += page_links(slurp(page)).size();
    for (const std::string& p : link_problems(page, root)) problems.push_back(p);
  }
  MESSAGE(pages.size() << " pages, " << links << " links and images");
  CHECK_MESSAGE(problems.empty(), joined_lines(problems));
}

TEST_CASE("docs: every attnscope command of the manual's sh blocks runs with the exit it states") {
  const std::set<std::string> subcommands = program_subcommands();
  // The reader of command lines: continuation lines, comments, wrappers, stated exits, text blocks.
  const std::string sample =
      "```sh\n"
      "attnscope compute --text \"a # b\" \\\n    --out out/x   # a comment\n"
      "build/app/attnscope kv-cache --bad-flag   # exit 2\n"
      "xvfb-run -a -s \"-screen 0 1920x1080x24\" build/app/attnscope --lesson 4 --screenshot x.png\n"
      "scripts/build.sh\n"
      "```\n"
      "```text\nattnscope compute --checkpoint ~/models/gpt2 --out out/gpt2\n```\n";
  const std::vector<DocCommand> read = page_commands("sample.md", sample);
  REQUIRE(read.size() == 3);
  CHECK(read[0].args == " compute --text \"a # b\"      --out out/x");
  CHECK(read[0].line == 2);
  CHECK(read[1].expected_exit == 2);
  CHECK(read[2].wrapper.find("xvfb-run") == 0);
  CHECK(subcommand_of(read[0], subcommands) == "compute");
  CHECK(subcommand_of(read[2], subcommands).empty());
  int skipped = 0;
  const fs::path scratch = fresh_dir("docs_commands_selftest");
  // A documented exit that the program does not give fails; the stated one passes.
  DocCommand wrong = read[1];
  wrong.expected_exit = 0;
  CHECK(!command_problem(wrong, subcommands, scratch, skipped).empty());
  CHECK(command_problem(read[1], subcommands, scratch, skipped).empty());

  const fs::path copy = repository_copy();
  std::vector<std::string> problems;
  size_t run = 0;
  for (const fs::path& page : manual_pages(root)) {
    const std::string name = fs::relative(page, root).string();
    for (const DocCommand& c : page_commands(name, slurp(page))) {
      ++run;
      if (std::string p = command_problem(c, subcommands, copy, skipped); !p.empty()) problems.push_back(p);
    }
  }
  MESSAGE(run << " documented commands, " << skipped
              << " of them skipped (window commands without Xvfb or a window in this build; train in the sanitized build)");
  CHECK(run > 0);
  CHECK_MESSAGE(problems.empty(), joined_lines(problems));
}
