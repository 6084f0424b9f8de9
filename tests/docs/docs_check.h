// docs_check.h — reading the manual (README.md, docs/**/*.md) as its tests need: its fenced code
// blocks, its links and images, its headings' anchors, and the `attnscope …` command lines of its
// ```sh / ```bash blocks. Written as plain functions on a file's text so the tests can also feed them
// broken pages and see them fail.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::test::docs {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

// The pages of the manual: README.md and every .md below docs/, sorted.
inline std::vector<fs::path> manual_pages(const fs::path& root) {
  std::vector<fs::path> pages;
  if (fs::is_directory(root / "docs"))
    for (const auto& e : fs::recursive_directory_iterator(root / "docs"))
      if (e.is_regular_file() && e.path().extension() == ".md") pages.push_back(e.path());
  std::sort(pages.begin(), pages.end());
  if (fs::exists(root / "README.md")) pages.insert(pages.begin(), root / "README.md");
  return pages;
}

// One line of a page: its number (from 1), its text, and the fence it sits in ("" outside fences;
// the info string's first word inside, e.g. "sh", "text", or "-" for a bare ```).
struct PageLine {
  int number = 0;
  std::string text;
  std::string fence;
  bool fence_marker = false;  // the ``` line itself
};

inline std::vector<PageLine> page_lines(const std::string& text) {
  std::vector<PageLine> out;
  std::string fence, marker;
  int n = 0;
  for (const std::string& line : lines_of(text)) {
    ++n;
    PageLine l{n, line, fence, false};
    size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && indent <= 3) {
      const std::string rest = line.substr(indent);
      const bool ticks = rest.rfind("```", 0) == 0, tildes = rest.rfind("~~~", 0) == 0;
      if (ticks || tildes) {
        const std::string this_marker = rest.substr(0, rest.find_first_not_of(rest[0]));
        if (fence.empty()) {
          std::string info = rest.substr(this_marker.size());
          info.erase(0, info.find_first_not_of(' '));
          info = info.substr(0, info.find_first_of(" {"));
          fence = info.empty() ? "-" : info;
          marker = this_marker;
          l.fence = fence;
          l.fence_marker = true;
        } else if (rest.rfind(marker, 0) == 0 &&
                   rest.find_first_not_of(marker[0] + std::string(" ")) == std::string::npos) {
          l.fence_marker = true;
          fence.clear();
        }
      }
    }
    out.push_back(l);
  }
  return out;
}

// The line with its `inline code` spans removed (links there are examples, not links).
inline std::string without_code_spans(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '`') {
      size_t run = line.find_first_not_of('`', i) - i;
      if (i + run > line.size()) run = line.size() - i;
      const std::string ticks(run, '`');
      const size_t close = line.find(ticks, i + run);
      if (close == std::string::npos) return out + line.substr(i);
      i = close + run;
      continue;
    }
    out += line[i++];
  }
  return out;
}

// GitHub's anchor for a heading: lower case; letters, digits, '_' and '-' kept (also non-ASCII letters:
// CJK, Greek, Latin accents); spaces become '-'; other punctuation and symbols (·, —, →, ×, …) dropped.
inline std::string heading_slug(std::string heading) {
  // Links and images in the heading count by their text; code spans by their content.
  heading = std::regex_replace(heading, std::regex(R"(!?\[([^\]]*)\]\([^)]*\))"), "$1");
  std::string slug;
  for (size_t i = 0; i < heading.size();) {
    const unsigned char c = static_cast<unsigned char>(heading[i]);
    if (c < 0x80) {
      if (std::isalnum(c) || c == '_' || c == '-')
        slug += char(std::tolower(c));
      else if (c == ' ')
        slug += '-';
      ++i;
      continue;
    }
    const int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
    for (int k = 1; k < len && i + size_t(k) < heading.size(); ++k) cp = (cp << 6) | (heading[i + size_t(k)] & 0x3F);
    const bool letter = (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) || (cp >= 0x370 && cp <= 0x3FF) ||
                        (cp >= 0x400 && cp <= 0x4FF) || (cp >= 0x3040 && cp <= 0x30FF) ||
                        (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
                        (cp >= 0xAC00 && cp <= 0xD7AF);
    if (letter) slug += heading.substr(i, size_t(len));
    i += size_t(len);
  }
  return slug;
}

// Every anchor a page offers: its headings' slugs (a repeated heading gets -1, -2, …) and the
// id="…" / name="…" of its HTML.
inline std::set<std::string> page_anchors(const std::string& text) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  const std::regex heading(R"(^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$)");
  const std::regex html_id(R"re((?:id|name)="([^"]+)")re");
  for (const PageLine& l : page_lines(text)) {
    if (!l.fence.empty()) continue;
    std::smatch m;
    if (std::regex_match(l.text, m, heading)) {
      const std::string base = heading_slug(m[1].str());
      const int n = seen[base]++;
      anchors.insert(n == 0 ? base : base + "-" + std::to_string(n));
    }
    for (std::sregex_iterator it(l.text.begin(), l.text.end(), html_id), end; it != end; ++it)
      anchors.insert((*it)[1].str());
  }
  return anchors;
}

struct Link {
  int line = 0;
  std::string target;  // as written
};

// The links and images of a page outside code: [text](target), ![alt](src), [name]: target,
// <img src="…">, <a href="…">.
inline std::vector<Link> page_links(const std::string& text) {
  std::vector<Link> links;
  const std::regex inline_link(R"re(\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\))re");
  const std::regex reference(R"re(^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?)re");
  const std::regex html(R"re((?:src|href)="([^"]+)")re");
  for (const PageLine& l : page_lines(text)) {
    if (!l.fence.empty()) continue;
    const std::string line = without_code_spans(l.text);
    for (const std::regex* r : {&inline_link, &html})
      for (std::sregex_iterator it(line.begin(), line.end(), *r), end; it != end; ++it)
        links.push_back({l.number, (*it)[1].str()});
    std::smatch m;
    if (std::regex_search(line, m, reference)) links.push_back({l.number, m[1].str()});
  }
  return links;
}

inline std::string percent_decoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += char(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// What is wrong with the page's links: a relative target that does not exist, or an anchor that
// names no heading of its page. External links (a scheme such as https:) are not followed.
inline std::vector<std::string> link_problems(const fs::path& page, const fs::path& root) {
  std::vector<std::string> problems;
  const std::string text = slurp(page);
  const std::regex scheme(R"(^[A-Za-z][A-Za-z0-9+.-]*:)");
  for (const Link& link : page_links(text)) {
    if (std::regex_search(link.target, scheme)) continue;
    const std::string where = page.filename().string() + ":" + std::to_string(link.line) + ": ";
    const size_t hash = link.target.find('#');
    const std::string path_part = percent_decoded(link.target.substr(0, hash));
    const std::string anchor = hash == std::string::npos ? "" : percent_decoded(link.target.substr(hash + 1));
    fs::path target = page;
    if (!path_part.empty()) {
      target = path_part[0] == '/' ? root / path_part.substr(1) : page.parent_path() / path_part;
      if (!fs::exists(target)) {
        problems.push_back(where + "'" + link.target + "': no such file or folder " +
                           target.lexically_normal().string());
        continue;
      }
    }
    if (!anchor.empty() && target.extension() == ".md" && !page_anchors(slurp(target)).count(anchor))
      problems.push_back(where + "'" + link.target + "': " + target.filename().string() +
                         " has no heading with the anchor #" + anchor);
  }
  return problems;
}

// One `attnscope …` command line of a ```sh or ```bash block, continuation lines joined.
struct DocCommand {
  std::string page;
  int line = 0;
  std::string text;       // as written, without the trailing comment
  std::string wrapper;    // what came before the attnscope word (e.g. `xvfb-run -a -s "…"`), or ""
  std::string args;       // what follows the attnscope word
  int expected_exit = 0;  // 0, or N from a trailing `# exit N`
};

// The position of an unquoted '#' that starts a comment (after a blank or at the start), or npos.
inline size_t comment_start(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"' && i + 1 < s.size())
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\\' && i + 1 < s.size()) {
      ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return i;
    }
  }
  return std::string::npos;
}

// The command lines of a page's ```sh / ```bash / ```shell blocks whose program is attnscope (written
// `attnscope` or a path ending in /attnscope, possibly after `xvfb-run …` or VAR=value assignments).
inline std::vector<DocCommand> page_commands(const std::string& page_name, const std::string& text) {
  std::vector<DocCommand> commands;
  std::string joined;
  int first_line = 0;
  const std::regex program(
      R"re(^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:xvfb-run(?:\s+(?:-[A-Za-z-]+(?:\s+"[^"]*"|\s+'[^']*'|\s+[^-\s]\S*)?))*\s+)?)((?:\S*/)?attnscope)(\s.*)?$)re");
  const std::regex exit_comment(R"(^#\s*exit\s+([0-9]+)\b)");
  for (const PageLine& l : page_lines(text)) {
    const bool shell = l.fence == "sh" || l.fence == "bash" || l.fence == "shell";
    if (!shell || l.fence_marker) {
      joined.clear();
      continue;
    }
    std::string line = l.text;
    if (joined.empty()) first_line = l.number;
    // A line ending in a backslash (before any comment) continues on the next one.
    const size_t hash = comment_start(line);
    std::string code = hash == std::string::npos ? line : line.substr(0, hash);
    const std::string comment = hash == std::string::npos ? "" : line.substr(hash);
    while (!code.empty() && (code.back() == ' ' || code.back() == '\t')) code.pop_back();
    if (!code.empty() && code.back() == '\\') {
      code.pop_back();
      joined += code + " ";
      continue;
    }
    std::string command = joined + code;
    joined.clear();
    command.erase(0, command.find_first_not_of(" \t"));
    if (command.rfind("$ ", 0) == 0) command.erase(0, 2);
    std::smatch m;
    if (!std::regex_match(command, m, program)) continue;
    DocCommand c{page_name, first_line, command, m[1].str(), m[3].str(), 0};
    std::smatch e;
    if (std::regex_search(comment, e, exit_comment)) c.expected_exit = std::stoi(e[1].str());
    commands.push_back(c);
  }
  return commands;
}

// The subcommand a command line runs ("" when it opens the window).
inline std::string subcommand_of(const DocCommand& c, const std::set<std::string>& subcommands) {
  std::stringstream ss(c.args);
  std::string first;
  ss >> first;
  if (subcommands.count(first)) return first;
  if (first == "--help" || first == "-h" || first == "--version") return first;
  return "";
}

}  // namespace attnscope::test::docs
