// Chinese tokens are drawn with real glyphs from a CJK font found through fontconfig; without one
// the window says so and spells the code points instead of drawing empty boxes.
#include <filesystem>
#include <fstream>
#include <map>

#include "gui_run.h"

namespace attnscope::test {
namespace {

// Pixels of `rect` (layout JSON) unlike its most common colour (the background) by more than 60.
struct Crop {
  int w = 0, h = 0;
  std::vector<bool> ink;
  int count() const { return int(std::count(ink.begin(), ink.end(), true)); }
};

Crop ink_of(const Png& png, const nlohmann::json& rect) {
  const int x0 = int(std::floor(rect["x"].get<double>())), y0 = int(std::floor(rect["y"].get<double>()));
  Crop c;
  c.w = int(std::ceil(rect["w"].get<double>()));
  c.h = int(std::ceil(rect["h"].get<double>()));
  std::map<uint32_t, int> histogram;
  for (int y = 0; y < c.h; ++y)
    for (int x = 0; x < c.w; ++x) {
      const Rgba p = png.at(x0 + x, y0 + y);
      ++histogram[uint32_t(p.r) << 16 | uint32_t(p.g) << 8 | p.b];
    }
  uint32_t bg = 0;
  int best = -1;
  for (const auto& [colour, n] : histogram)
    if (n > best) best = n, bg = colour;
  const Rgba background{uint8_t(bg >> 16), uint8_t(bg >> 8), uint8_t(bg), 255};
  for (int y = 0; y < c.h; ++y)
    for (int x = 0; x < c.w; ++x) c.ink.push_back(channel_distance(png.at(x0 + x, y0 + y), background) > 60);
  return c;
}

int differing(const Crop& a, const Crop& b) {
  int n = 0;
  for (int y = 0; y < std::min(a.h, b.h); ++y)
    for (int x = 0; x < std::min(a.w, b.w); ++x) n += a.ink[size_t(y * a.w + x)] != b.ink[size_t(y * b.w + x)];
  return n;
}

const std::vector<std::string> characters = {"我", "喜", "欢", "打", "篮", "球"};

}  // namespace

TEST_SUITE("gui_chinese") {
  TEST_CASE("heads window: a Chinese sentence renders its glyphs") {
    const WindowRun w = run_window("chinese", "--text 我喜欢打篮球 --heads 4");
    REQUIRE_MESSAGE(w.layout["font_notice"] == "",
                    "no CJK font found through fontconfig (install fonts-wqy-microhei): " << w.layout["font_notice"]);
    std::map<std::string, nlohmann::json> query_labels;
    for (const auto& l : w.layout["labels"])
      if (l["axis"] == "query") query_labels[l["text"].get<std::string>()] = l;
    // Every character is drawn as itself (not spelled U+XXXX), and its box holds ink.
    std::vector<Crop> crops;
    for (const std::string& ch : characters) {
      CAPTURE(ch);
      REQUIRE(query_labels.count(ch) == 1);
      crops.push_back(ink_of(w.png, query_labels[ch]));
      CHECK(crops.back().count() > 15);
    }
    // Not tofu: empty boxes would all look the same; different characters look different.
    for (size_t a = 0; a < crops.size(); ++a)
      for (size_t b = a + 1; b < crops.size(); ++b) {
        CAPTURE(characters[a]);
        CAPTURE(characters[b]);
        CHECK(differing(crops[a], crops[b]) > 10);
      }
  }

  TEST_CASE("heads window: without a CJK font the window says so and spells the code points") {
    // A fontconfig setup that knows only DejaVu (Latin, Greek, no ideographs).
    const auto dir = attnscope::test::test_tmp() / "latin_only_fonts";
    std::filesystem::create_directories(dir);
    const auto conf = dir / "fonts.conf";
    {
      std::ofstream f(conf);
      f << "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n<fontconfig>\n"
           "  <dir>/usr/share/fonts/truetype/dejavu</dir>\n  <cachedir>" << (dir / "cache").string() << "</cachedir>\n"
           "</fontconfig>\n";
    }
    const WindowRun w = run_window("no_cjk", "--text 我喜欢打篮球 --heads 4",
                                   "FONTCONFIG_FILE=" + shell_quote(conf.string()) + " XDG_CONFIG_HOME=" +
                                       shell_quote((dir / "config").string()));
    CHECK(w.layout["font_notice"].get<std::string>().find("CJK") != std::string::npos);
    bool spelled = false;
    for (const auto& l : w.layout["labels"])
      if (l["axis"] == "query" && l["index"] == 0) spelled = l["text"] == "U+6211";  // 我
    CHECK(spelled);
  }
}

}  // namespace attnscope::test
