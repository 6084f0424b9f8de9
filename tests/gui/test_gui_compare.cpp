// Compare A/B in the window (window_compare.cpp): its cells equal A's and B's own exports made separately
// on the same locked range, the difference view's cells are the engine's B − A on the diverging map, and
// the Heads toolbar's Keep as A, a slider change, then Compare with A opens it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/compare.h"
#include "attnscope/scene/scene_json.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

const char* const sentence = "The cat sat on the mat.";

Scene scene_of(AttentionKind kind, int groups, bool causal) {
  Scene s;
  s.input.text = sentence;
  s.model.kind = kind;
  s.model.heads = 4;
  s.model.groups = groups;
  s.model.causal = causal;
  return s;
}

std::string b_flags(bool causal) {
  return std::string("--text '") + sentence + "' --kind mqa --heads 4 --groups 1" + (causal ? " --causal" : "");
}

std::string centre(const nlohmann::json& r) {
  char text[64];
  std::snprintf(text, sizeof text, "%d,%d", int(r["x"].get<double>() + r["w"].get<double>() / 2),
                int(r["y"].get<double>() + r["h"].get<double>() / 2));
  return text;
}

// The centre of a recorded widget, "X,Y".
std::string widget_centre(const WindowRun& w, const std::string& name) {
  REQUIRE(w.layout.at("widgets").contains(name));
  return centre(w.layout["widgets"][name]);
}

}  // namespace

TEST_SUITE("gui_compare") {
  TEST_CASE("compare A/B: a checkpoint against its MQA conversion, with both top-1 next tokens and the drift") {
    // Keep the shipped model's layer 0 as A, pool its K/V heads to one (B), then compare.
    const std::string model = "--checkpoint '" + (std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "models" /
                                                  "induction").string() + "' --text 'a b c a b c a'";
    const WindowRun first = run_window("compare_ckpt_where", model + " --frames 30");
    const std::string keep = widget_centre(first, "heads.keep_a");
    const auto& slider = first.layout["widgets"]["checkpoint.kv_heads"];
    char pooled[64];
    std::snprintf(pooled, sizeof pooled, "%d,%d", int(slider["x"].get<double>() + 3),
                  int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    const WindowRun kept = run_window("compare_ckpt_kept", model + " --pointer '" + keep + ";" + pooled +
                                                              "' --clicks 12,20 --frames 40");
    const std::string compare = widget_centre(kept, "heads.compare");
    const WindowRun w = run_window("compare_ckpt", model + " --pointer '" + keep + ";" + pooled + ";" + compare +
                                                       "' --clicks 12,20,30 --frames 45");
    INFO("stderr: " << w.run.err);
    REQUIRE(int(w.layout["heads"].size()) == 8);
    const std::vector<std::string> texts = texts_of(w, "###compare");
    const std::string all = joined(texts);
    INFO(all);
    CHECK(all.find("top-1 next token: A 'b' (") != std::string::npos);  // the induction head's answer, then B's
    CHECK(all.find("GQA → MQA · G=2 → G=1") != std::string::npos);
    // The drift line (wrapped over several texts) has each head's drift; their mean is the mean drift the
    // Model window reports for the conversion (the engine's head_drift on both sides).
    std::string line;
    for (const std::string& t : texts) line += t + " ";
    const std::string lead = "Jensen–Shannon drift A → B per head (nats): ";
    const size_t at = line.find(lead);
    REQUIRE(at != std::string::npos);
    double sum = 0, shown_mean = -1;
    int found = 0;
    const char* p = line.c_str() + at + lead.size();
    for (int h = 0; h < 4; ++h) {
      int head = -1, used = 0;
      double d = 0;
      REQUIRE(std::sscanf(p, " h%d %lf%n", &head, &d, &used) == 2);
      CHECK(head == h);
      sum += d;
      ++found;
      p += used;
      while (*p == ' ' || *p == '\xc2' || *p == '\xb7') ++p;  // " · "
    }
    REQUIRE(std::sscanf(p, "mean %lf", &shown_mean) == 1);
    CHECK(std::abs(shown_mean - sum / 4) <= 0.0006);
    double reported = -1;
    for (const auto& t : w.layout.at("texts")) {
      const std::string text = t.at("text").get<std::string>();
      const std::string lead = "Mean drift over the 4 heads of layer 0: ";
      if (text.rfind(lead, 0) == 0) reported = std::stod(text.substr(lead.size()));
    }
    REQUIRE(reported > 0);
    CHECK(std::abs(sum / 4 - reported) <= 0.0011);  // each printed to 3 decimals
  }

  TEST_CASE("compare A/B: the window's cells equal A's and B's exports made separately on the same locked range") {
    const std::filesystem::path a_file = test_tmp() / "compare_cells_a.json";
    const Scene sa = scene_of(AttentionKind::mha, 4, true), sb = scene_of(AttentionKind::mqa, 1, true);
    save_scene(a_file, sa);
    const WindowRun w = run_window("compare_cells", b_flags(true) + " --compare-a '" + a_file.string() + "'");
    INFO("stderr: " << w.run.err);
    const Analysis a = analyse(sa), b = analyse(sb);
    const AbComparison cmp = compare_analyses(a, b);
    ExportRequest request;
    request.scale = 2;
    request.color_scale = {ScaleMode::locked, cmp.locked};
    const ExportedFile pa = render_export(a, request), pb = render_export(b, request);
    REQUIRE(pa.image);
    REQUIRE(pb.image);
    REQUIRE(int(w.layout["heads"].size()) == 8);  // A 0, B 0, A 1, B 1, …
    const int t = cmp.tokens;
    int checked = 0, worst = 0, unlike = 0;
    for (const auto& rec : w.layout["heads"]) {
      const int panel = rec["head"].get<int>();
      const ExportedFile& paper = panel % 2 == 0 ? pa : pb;
      const PanelLayout& layout = paper.layout->panels[size_t(panel / 2)];
      const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
      REQUIRE(cell >= 3.0);
      for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) {
          const Rect r = layout.cell(i, j);
          const Rgba on_paper = paper.image->pixel(r.centre_x(), r.centre_y());
          const Rgba on_screen = w.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell));
          const int d = channel_distance(on_screen, on_paper);
          worst = std::max(worst, d);
          if (d > 2) {
            INFO("panel " << panel << " cell (" << i << ", " << j << ")");
            CHECK(d <= 2);
          }
          // the other side's colour differs somewhere: the test would see A drawn as B
          const ExportedFile& other = panel % 2 == 0 ? pb : pa;
          const Rect o = other.layout->panels[size_t(panel / 2)].cell(i, j);
          unlike += channel_distance(on_screen, other.image->pixel(o.centre_x(), o.centre_y())) > 2;
          ++checked;
        }
    }
    MESSAGE(checked << " cells compared, largest channel difference " << worst);
    CHECK(checked == 8 * t * t);
    CHECK(unlike > 0);
    // Each B caption carries the engine's drift of its head, in whichever caption form fits.
    const std::vector<std::string> texts = texts_of(w, "###compare");
    for (int h = 0; h < 4; ++h) {
      char full[64], brief[64];
      std::snprintf(full, sizeof full, "B · head %d · JS %.3f", h, cmp.drift[size_t(h)]);
      std::snprintf(brief, sizeof brief, "B h%d · %.3f", h, cmp.drift[size_t(h)]);
      const bool shown = std::find(texts.begin(), texts.end(), full) != texts.end() ||
                         std::find(texts.begin(), texts.end(), brief) != texts.end();
      INFO("head " << h << ": " << full << "\n" << joined(texts));
      CHECK(shown);
    }
  }

  TEST_CASE("compare A/B: A and B with different heads are refused on screen, naming both counts") {
    const std::filesystem::path a_file = test_tmp() / "compare_refused_a.json";
    Scene eight = scene_of(AttentionKind::mha, 8, false);
    eight.model.heads = 8;
    save_scene(a_file, eight);
    const WindowRun w = run_window("compare_refused", b_flags(false) + " --compare-a '" + a_file.string() + "'");
    const std::string texts = joined(texts_of(w, "###compare"));
    INFO(texts);
    CHECK(texts.find("A has 8 heads and 7 tokens, B has 4 heads and 7 tokens") != std::string::npos);
    CHECK(w.layout["heads"].size() == 4);  // nothing drawn over the Heads view's own heads
  }

  TEST_CASE("compare A/B: the difference view's cells are the engine's B − A on the diverging map") {
    const std::filesystem::path a_file = test_tmp() / "compare_difference_a.json";
    const Scene sa = scene_of(AttentionKind::mha, 4, false), sb = scene_of(AttentionKind::mqa, 1, false);
    save_scene(a_file, sa);
    const WindowRun w = run_window("compare_difference",
                                   b_flags(false) + " --compare-a '" + a_file.string() + "' --compare-view difference");
    INFO("stderr: " << w.run.err);
    const Analysis a = analyse(sa), b = analyse(sb);
    const AbComparison cmp = compare_analyses(a, b);
    REQUIRE(int(w.layout["heads"].size()) == 4);
    const int t = cmp.tokens;
    int checked = 0, not_white = 0;
    for (const auto& rec : w.layout["heads"]) {
      const int h = rec["head"].get<int>();
      const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
      CHECK(rec["range"][0].get<double>() == doctest::Approx(cmp.difference_range.lo));
      for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) {
          const float d = b.attention->result.probs[size_t(h)](i, j) - a.attention->result.probs[size_t(h)](i, j);
          const Rgba want = colormap_lookup(Colormap::diverging, normalise(d, cmp.difference_range));
          const Rgba on_screen = w.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell));
          CHECK(channel_distance(on_screen, want) <= 2);
          not_white += channel_distance(want, colormap_lookup(Colormap::diverging, 0.5f)) > 8;
          ++checked;
        }
    }
    CHECK(checked == 4 * t * t);
    CHECK(not_white > 0);
  }

  TEST_CASE("compare A/B: Keep as A, a slider change, then Compare with A shows A and B with the drift") {
    // Where the buttons and the slider are (a run with A kept shows Compare with A too).
    const std::filesystem::path a_file = test_tmp() / "compare_keep_a.json";
    save_scene(a_file, scene_of(AttentionKind::mqa, 1, false));
    const WindowRun where = run_window("compare_keep_where", b_flags(false) + " --compare-a '" + a_file.string() + "'");
    const nlohmann::json& widgets = where.layout.at("widgets");
    REQUIRE(widgets.contains("heads.keep_a"));
    REQUIRE(widgets.contains("heads.compare"));
    REQUIRE(widgets.contains("model.d_model"));
    const auto& slider = widgets["model.d_model"];
    char on_slider[64];
    std::snprintf(on_slider, sizeof on_slider, "%d,%d", int(slider["x"].get<double>() + 3),
                  int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    const WindowRun w = run_window("compare_keep", b_flags(false) + " --pointer '" + centre(widgets["heads.keep_a"]) + ";" +
                                                       on_slider + ";" + centre(widgets["heads.compare"]) +
                                                       "' --clicks 4,9,14 --frames 20");
    INFO("stderr: " << w.run.err);
    REQUIRE(int(w.layout["heads"].size()) == 8);
    const std::string texts = joined(texts_of(w, "###compare"));
    CHECK(texts.find("A → B: d_model=") != std::string::npos);
    // B's caption carries head 0's drift, in its longest form that fits ("B · head 0 · JS 0.078", "B h0 · 0.078").
    CHECK((texts.find("B · head 0 · JS 0.") != std::string::npos || texts.find("B h0 · 0.") != std::string::npos));
  }
}

}  // namespace attnscope::test
