// The Heads window against the engine: one heatmap per head, cell colours equal to the colormap of
// the engine's values, and kv-group frames that follow SPEC's g(h) = floor(h / (H/G)).
#include <cmath>
#include <map>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/attention/weights.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

const char* const sentence = "The cat sat on the mat because it was tired.";

Scene sentence_scene(int heads, int groups, AttentionKind kind) {
  Scene s;
  s.input.text = sentence;
  s.model.kind = kind;
  s.model.heads = heads;
  s.model.groups = groups;
  return s;
}

// min/max over the finite values of the given heads.
ValueRange finite_range(const Tensor3& values, int first, int last) {
  float lo = INFINITY, hi = -INFINITY;
  for (int h = first; h <= last; ++h)
    for (Eigen::Index i = 0; i < values[size_t(h)].size(); ++i) {
      const float v = values[size_t(h)].data()[i];
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  return {lo, hi};
}

// Every cell centre of every head in the screenshot against value_to_color of the engine's value.
void check_cells(const WindowRun& w, const Tensor3& values, Colormap map, bool shared) {
  const int heads = int(values.size());
  REQUIRE(int(w.layout["heads"].size()) == heads);
  const ValueRange all = finite_range(values, 0, heads - 1);
  int checked = 0, worst = 0;
  for (const auto& rec : w.layout["heads"]) {
    const int h = rec["head"].get<int>();
    const int tokens = rec["tokens"].get<int>();
    REQUIRE(tokens == int(values[size_t(h)].rows()));
    // The range the picture says it used is the one the engine's numbers give.
    const ValueRange expected = shared ? all : finite_range(values, h, h);
    const ValueRange range{rec["range"][0].get<float>(), rec["range"][1].get<float>()};
    CHECK(range.lo == doctest::Approx(expected.lo).epsilon(1e-6));
    CHECK(range.hi == doctest::Approx(expected.hi).epsilon(1e-6));
    const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
    REQUIRE(cell >= 3.0);  // big enough to sample a centre unambiguously
    for (int i = 0; i < tokens; ++i)
      for (int j = 0; j < tokens; ++j) {
        const int px = int(std::floor(x + (j + 0.5) * cell)), py = int(std::floor(y + (i + 0.5) * cell));
        const Rgba want = value_to_color(values[size_t(h)](i, j), expected, map);
        const int d = channel_distance(w.png.at(px, py), want);
        worst = std::max(worst, d);
        if (d > 2) {
          INFO("head " << h << " cell (" << i << ", " << j << ") at pixel (" << px << ", " << py << ")");
          CHECK(d <= 2);
        }
        ++checked;
      }
  }
  MESSAGE(checked << " cells checked, largest channel difference " << worst);
  CHECK(checked == heads * int(values[0].rows()) * int(values[0].cols()));
}

}  // namespace

TEST_SUITE("gui_heads") {
  // issue 40: in the light theme a frame is white, as a popup is: the token-range popup's "numbers in
  // cells" checkbox showed no box. Its box's edge must stand out from the popup around it (screenshot).
  TEST_CASE("heads view: the token-range popup's checkbox shows its box in the light theme") {
    const std::string args = "--size 1280x720 --theme light";
    const WindowRun closed = run_window("heads_numbers_box_closed", args);
    REQUIRE(closed.layout.at("widgets").contains("heads.tokens"));
    const auto& tokens = closed.layout["widgets"]["heads.tokens"];
    const std::string at = std::to_string(int(tokens["x"].get<double>() + tokens["w"].get<double>() / 2)) + "," +
                           std::to_string(int(tokens["y"].get<double>() + tokens["h"].get<double>() / 2));
    const WindowRun open = run_window("heads_numbers_box_open", args + " --pointer " + at + " --clicks 4 --frames 10");
    REQUIRE(open.layout.at("widgets").contains("heads.numbers"));
    const auto& box = open.layout["widgets"]["heads.numbers"];
    const int x = int(std::lround(box["x"].get<double>())), y = int(std::lround(box["y"].get<double>()));
    const int side = int(std::lround(box["h"].get<double>()));  // the box is as tall as the checkbox, and square
    const Rgba around = open.png.at(x - 3, y + side / 2);  // the popup's background, left of the box
    int most = 0;  // how far the box's outline (its outer two pixels all round) is from that background
    for (int i = 2; i < side - 2; ++i)
      for (int d = 0; d < 2; ++d)
        most = std::max({most, channel_distance(open.png.at(x + i, y + d), around),
                         channel_distance(open.png.at(x + i, y + side - 1 - d), around),
                         channel_distance(open.png.at(x + d, y + i), around),
                         channel_distance(open.png.at(x + side - 1 - d, y + i), around)});
    CHECK(most >= 40);
  }

  // issue 40: the Heads view did not say which axis is which (Relative position 1D and the exports do).
  TEST_CASE("heads view: its axes are named, queries down and keys across, in both languages and sizes") {
    for (const char* size : {"1280x720", "1920x1080"})
      for (const bool zh : {false, true}) {
        CAPTURE(size);
        CAPTURE(zh);
        const WindowRun w = run_window(std::string("heads_axes_") + size + (zh ? "_zh" : ""),
                                       std::string("--size ") + size + (zh ? " --language zh" : " --language en"));
        const std::vector<std::string> texts = texts_of(w, "###heads");
        INFO(joined(texts));
        CHECK(shows(texts, zh ? "行：查询 ↓ · 列：键 →" : "rows: queries ↓ · columns: keys →"));
        // Above the heatmaps, not over them.
        REQUIRE(w.layout.at("widgets").contains("heads.axes"));
        const auto& axes = w.layout["widgets"]["heads.axes"];
        for (const auto& h : w.layout.at("heads"))
          CHECK(axes["y"].get<double>() + axes["h"].get<double>() <= h["y"].get<double>());
      }
  }

  TEST_CASE("heads window: one heatmap per head for H = 1, 4, 8, 16") {
    for (int heads : {1, 4, 8, 16}) {
      CAPTURE(heads);
      const WindowRun w = run_window("count_" + std::to_string(heads), "--heads " + std::to_string(heads));
      REQUIRE(int(w.layout["heads"].size()) == heads);
      std::vector<int> seen(size_t(heads), 0);
      for (const auto& h : w.layout["heads"]) ++seen[size_t(h["head"].get<int>())];
      for (int h = 0; h < heads; ++h) CHECK(seen[size_t(h)] == 1);
      // No two heatmaps overlap.
      for (size_t a = 0; a < w.layout["heads"].size(); ++a)
        for (size_t b = a + 1; b < w.layout["heads"].size(); ++b) {
          const auto &p = w.layout["heads"][a], &q = w.layout["heads"][b];
          const bool apart = p["x"].get<double>() + p["w"].get<double>() <= q["x"].get<double>() ||
                             q["x"].get<double>() + q["w"].get<double>() <= p["x"].get<double>() ||
                             p["y"].get<double>() + p["h"].get<double>() <= q["y"].get<double>() ||
                             q["y"].get<double>() + q["h"].get<double>() <= p["y"].get<double>();
          CHECK(apart);
        }
    }
  }

  TEST_CASE("heads window: cell colours are the colormap of the engine's probabilities") {
    for (int heads : {1, 4, 8, 16}) {
      CAPTURE(heads);
      const WindowRun w = run_window("probs_" + std::to_string(heads), "--heads " + std::to_string(heads));
      const Analysis a = analyse(sentence_scene(heads, heads, AttentionKind::mha));
      check_cells(w, a.attention->result.probs, Colormap::viridis, true);
    }
  }

  TEST_CASE("heads window: magma, per-head scale, and causal scores on the diverging map") {
    {
      const WindowRun w = run_window("magma_per_head", "--heads 4 --colormap magma --per-head-scale");
      const Analysis a = analyse(sentence_scene(4, 4, AttentionKind::mha));
      check_cells(w, a.attention->result.probs, Colormap::magma, false);
    }
    {
      const WindowRun w = run_window("scores_causal", "--kind gqa --heads 8 --groups 2 --causal --scores --colormap diverging");
      Scene s = sentence_scene(8, 2, AttentionKind::gqa);
      s.model.causal = true;
      const Analysis a = analyse(s);
      // The diverging map is centred on 0: its range is symmetric.
      const Tensor3& scores = a.attention->result.scores;
      REQUIRE(int(w.layout["heads"].size()) == 8);
      const ValueRange r = finite_range(scores, 0, 7);
      const float m = std::max(std::fabs(r.lo), std::fabs(r.hi));
      const auto& rec = w.layout["heads"][0];
      CHECK(rec["range"][0].get<float>() == doctest::Approx(-m).epsilon(1e-6));
      CHECK(rec["range"][1].get<float>() == doctest::Approx(m).epsilon(1e-6));
      // Masked cells (key after query) show the colormap's masked colour; the others their score.
      const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
      const ValueRange sym{-m, m};
      for (int i = 0; i < 11; ++i)
        for (int j = 0; j < 11; ++j) {
          const Rgba want = j > i ? masked_color(Colormap::diverging) : value_to_color(scores[0](i, j), sym, Colormap::diverging);
          CHECK(channel_distance(w.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell)), want) <= 2);
        }
    }
  }
}

TEST_SUITE("gui_heads") {
  TEST_CASE("heads window: a click selects that query row everywhere; a double-click opens the head large") {
    const WindowRun first = run_window("click_layout", "--heads 4");
    const auto& head2 = first.layout["heads"][2];
    const double cell = head2["cell"].get<double>();
    const int row = 6, col = 3;
    const int x = int(head2["x"].get<double>() + (col + 0.5) * cell), y = int(head2["y"].get<double>() + (row + 0.5) * cell);
    const std::string at = " --pointer " + std::to_string(x) + "," + std::to_string(y);
    const WindowRun click = run_window("click_once", "--heads 4 --frames 6 --clicks 2" + at);
    CHECK(click.layout["selected_query"] == row);
    CHECK(click.layout["relpos_query"][0] == row);  // the sentence's relative-position query follows
    CHECK(click.layout["large_head"] == -1);
    const WindowRun twice = run_window("click_double", "--heads 4 --frames 6 --clicks 2,4" + at);
    CHECK(twice.layout["large_head"] == 2);
    CHECK(twice.layout["selected_query"] == row);
  }
}

TEST_SUITE("gui_groups") {
  TEST_CASE("heads window: kv-group frames follow g(h) = floor(h / (H/G))") {
    const int heads = 8;
    std::map<int, std::vector<uint32_t>> frames_by_groups;
    for (int groups : {8, 4, 2, 1}) {
      CAPTURE(groups);
      const WindowRun w = run_window("groups_" + std::to_string(groups), "--kind gqa --heads 8 --groups " + std::to_string(groups));
      REQUIRE(int(w.layout["heads"].size()) == heads);
      std::vector<uint32_t> frame(static_cast<size_t>(heads));
      for (const auto& rec : w.layout["heads"]) {
        const int h = rec["head"].get<int>();
        CHECK(rec["kv_group"].get<int>() == h / (heads / groups));
        // The frame is drawn just outside the image, in the colour the layout names.
        const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), f = rec["frame"].get<double>();
        const Rgba left = w.png.at(int(x - f * 0.5), int(y + rec["h"].get<double>() * 0.5));
        const Rgba top = w.png.at(int(x + rec["w"].get<double>() * 0.5), int(y - f * 0.5));
        const Rgba named{uint8_t(rec["frame_color"][0].get<int>()), uint8_t(rec["frame_color"][1].get<int>()),
                         uint8_t(rec["frame_color"][2].get<int>()), 255};
        CHECK(channel_distance(left, named) <= 2);
        CHECK(channel_distance(top, named) <= 2);
        frame[size_t(h)] = uint32_t(left.r) << 16 | uint32_t(left.g) << 8 | left.b;
      }
      // Same group ⇔ same frame colour.
      for (int a = 0; a < heads; ++a)
        for (int b = 0; b < heads; ++b) {
          const bool same_group = a / (heads / groups) == b / (heads / groups);
          CHECK((frame[size_t(a)] == frame[size_t(b)]) == same_group);
        }
      frames_by_groups[groups] = frame;
    }
    // Changing G changed the frames.
    CHECK(frames_by_groups[8] != frames_by_groups[4]);
    CHECK(frames_by_groups[4] != frames_by_groups[2]);
    CHECK(frames_by_groups[2] != frames_by_groups[1]);
  }
}

}  // namespace attnscope::test

namespace attnscope::test {

TEST_SUITE("gui_groups") {
  TEST_CASE("shapes window: changing MHA to MQA lists what changed") {
    const WindowRun first = run_window("shapes_before", "--view shapes --heads 8");
    REQUIRE(first.layout["widgets"].contains("model.kind.mqa"));
    const auto& mqa = first.layout["widgets"]["model.kind.mqa"];
    const int x = int(mqa["x"].get<double>() + mqa["h"].get<double>() * 0.5), y = int(mqa["y"].get<double>() + mqa["h"].get<double>() * 0.5);
    const WindowRun after = run_window("shapes_after", "--view shapes --heads 8 --frames 6 --clicks 2 --pointer " +
                                                           std::to_string(x) + "," + std::to_string(y));
    const auto settings = after.layout["setting_changes"].get<std::vector<std::string>>();
    const auto shapes = after.layout["shape_changes"].get<std::vector<std::string>>();
    auto has = [](const std::vector<std::string>& lines, const std::string& line) {
      return std::find(lines.begin(), lines.end(), line) != lines.end();
    };
    CHECK(has(settings, "kind: mha → mqa"));
    CHECK(has(settings, "groups G: 8 → 1"));
    CHECK(has(shapes, "split kv heads: [8, 11, 8] → [1, 11, 8]"));
    CHECK(has(shapes, "project K: [11, 64] → [11, 8]"));
    CHECK(has(shapes, "KV cache per token (fp32): 512 B → 64 B"));
  }
}

}  // namespace attnscope::test
