// Long inputs in the window (issue 38 item 6): gpt-oss's fixture (sinks, a window of 8 on layer 0) on an input past
// the stack's limit (limits::max_tokens) opens with each head computed on demand. The Heads view says so (tokens
// and the bytes the pass kept, the engine's figure), names the pooling, and draws each head as the overview that
// `export --long --what head:N --pixels P` writes (its colours sampled from the screenshot, P read from the layout
// record); the views that need the whole stack say why they have nothing and up to what T they work. Through the X
// server (xdotool): hovering a pooled block gives its token ranges and its max; the wheel over it opens the exact
// cells around it, whose tooltip gives the cell's exact value (the engine's map); Save PNG/SVG/CSV of that head
// are byte for byte the CLI's export — in English and in 中文. The Model view draws every layer's heads pooled to
// its thumbnails, each the CLI's overview at the thumbnail's pixels (the layout record's model_view.long_thumb.L.H);
// after the worker's prefetch, a real click on a thumbnail (another layer) and on "mean" make no head map (the
// record's long_maps_made stays).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>

#include "attnscope/figure/colormap.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/head_maps.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string fixture = "gpt_oss_dequantized_bf16";

// "pixels=P block=B rows=R" of the layout record's heads.long_head.N.
struct TileRecord {
  int pixels = 0, block = 0, rows = 0;
  double x = 0, y = 0, w = 0, h = 0;
};
TileRecord tile_named(const json& layout, const std::string& name) {
  REQUIRE_MESSAGE(layout.at("widgets").contains(name), layout.at("widgets").dump());
  const json& r = layout.at("widgets").at(name);
  TileRecord t;
  REQUIRE(std::sscanf(r.at("text").get<std::string>().c_str(), "pixels=%d block=%d rows=%d", &t.pixels, &t.block, &t.rows) == 3);
  t.x = r.at("x"), t.y = r.at("y"), t.w = r.at("w"), t.h = r.at("h");
  return t;
}
TileRecord tile_of(const json& layout, int head) { return tile_named(layout, "heads.long_head." + std::to_string(head)); }

std::vector<std::string> all_texts(const json& layout) {
  std::vector<std::string> texts;
  for (const json& t : layout.at("texts")) texts.push_back(t.at("text"));
  return texts;
}

// The CLI's overview of one head as .npy (masked blocks NaN).
NpyArray cli_npy(const fs::path& dir, const std::vector<int32_t>& ids, int head, int pixels, int layer = 0) {
  const fs::path out = dir / ("cli_L" + std::to_string(layer) + "_head" + std::to_string(head) + ".npy");
  const CliRun r = run_cli("export --checkpoint " + shell_quote(model_fixture(fixture).string()) + " --ids " +
                           ids_arg(ids) + " --long --layer " + std::to_string(layer) + " --what head:" + std::to_string(head) + " --pixels " +
                           std::to_string(pixels) + " --format npy --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return read_npy(out);
}

// The screenshot's colour at a block's centre is the CLI's value of that block (or of a neighbour: a block may be less
// than two pixels wide) on the head's own colour range, as the export colours it: at the sink column, the diagonal,
// the window's band just left of it, a masked block above the diagonal. Returns the blocks that differ.
int differing_blocks(const Png& png, const TileRecord& tile, const NpyArray& a) {
  const ValueRange range = auto_range(a.data.data(), a.data.size());
  const double cell = tile.w / tile.rows;
  auto expected = [&](int r, int c) {
    const float v = a.data[size_t(r) * size_t(tile.rows) + size_t(c)];
    return std::isnan(v) ? masked_color(Colormap::viridis) : colormap_lookup(Colormap::viridis, normalise(v, range));
  };
  const int R = tile.rows;
  const int cells[][2] = {{R - 1, 0}, {R / 2, 0}, {R - 1, R - 1}, {R / 2, R / 2}, {R / 2, R / 2 - 1}, {0, R - 1}, {R / 3, R - 2}};
  int differing = 0;
  for (const auto& rc : cells) {
    const int r = rc[0], c = rc[1];
    const Rgba got = png.at(int(tile.x + (c + 0.5) * cell), int(tile.y + (r + 0.5) * cell));
    int best = 255;
    for (int dr = -1; dr <= 1; ++dr)
      for (int dc = -1; dc <= 1; ++dc)
        if (r + dr >= 0 && r + dr < R && c + dc >= 0 && c + dc < R)
          best = std::min(best, channel_distance(got, expected(r + dr, c + dc)));
    differing += best > 2;
  }
  return differing;
}

}  // namespace

TEST_SUITE("gui_long") {
  TEST_CASE("a long input: the on-demand line, the pooling named, each head's pixels the CLI's overview, the other views say why") {
    const std::vector<int32_t> ids = long_input_ids();
    const int T = int(ids.size());
    const auto m = model::open(model_fixture(fixture));
    REQUIRE_FALSE(model::stack_fits(m->config, T));
    const std::string kept = model::byte_size_text(model::on_demand_kept_bytes(m->config, T));
    int longest = 1;  // the longest input whose stack fits, as the views say it
    while (model::stack_fits(m->config, longest + 1)) ++longest;
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const fs::path dir = test_tmp() / (std::string("gui_long_") + language);
      fs::create_directories(dir);
      const WindowRun w = run_window(std::string("long_") + language,
                                     long_input_flags() + " --frames 8 --language " + language);
      const std::vector<std::string> texts = all_texts(w.layout);
      INFO(joined(texts));
      CHECK(w.layout.at("error") == "");
      const std::string line = zh ? "长输入：" + std::to_string(T) + " 个词元，各头按需计算，保留查询和键共 " + kept
                                  : "long input: " + std::to_string(T) + " tokens, heads computed on demand, " + kept +
                                        " of queries and keys kept";
      CHECK(shows(texts, line));
      for (int h = 0; h < 4; ++h) {
        CAPTURE(h);
        const TileRecord tile = tile_of(w.layout, h);
        CHECK(tile.block == model::pool_block(T, tile.pixels));
        CHECK(tile.rows == (T + tile.block - 1) / tile.block);
        CHECK(tile.block > 1);  // pooled: the tile is far smaller than T cells
        const std::string b = std::to_string(tile.block);
        CHECK(shows(texts, zh ? b + "×" + b + " 最大池化" : "max-pooled " + b + "×" + b));
        // The screenshot's colour at a block's centre is the CLI's value of that block (or of a neighbour: a
        // block may be less than two pixels wide) on the head's own colour range, as the export colours it.
        const NpyArray a = cli_npy(dir, ids, h, tile.pixels);
        REQUIRE(a.shape == std::vector<int64_t>{tile.rows, tile.rows});
        CHECK(differing_blocks(w.png, tile, a) == 0);
      }
      // A view that needs every layer at once says why and up to what T it works.
      for (const char* view : {"rollout"}) {
        CAPTURE(view);
        const WindowRun run = run_window(std::string("long_") + view + "_" + language,
                                         long_input_flags() + " --frames 8 --show-" + view + " --language " +
                                             language);
        const std::vector<std::string> rt = all_texts(run.layout);
        INFO(joined(rt));
        CHECK(shows(rt, zh ? "个词元，因此它的头按需逐个计算" : "tokens, so its heads are computed one at a time on demand"));
        CHECK(shows(rt, zh ? "最多接受 " + std::to_string(longest) + " 个词元" : "takes at most " + std::to_string(longest) + " tokens"));
        CHECK(shows(rt, zh ? "“注意力展开”需要同时拿到每一层的注意力" : "Rollout needs every layer's attention at once"));
      }
    }
  }

  TEST_CASE("a long input through the X server: hover a block, the wheel opens exact cells, their value, Save equals the CLI") {
    const std::vector<int32_t> ids = long_input_ids();
    const int T = int(ids.size());
    const auto m = model::open(model_fixture(fixture));
    model::ForwardOptions o;
    o.keep = model::AttentionKeep::on_demand;
    const model::ForwardResult f = model::forward(*m, ids, o);
    const Mat head0 = f.head_maps->head(1, 0);  // layer 1 is global: the sink column is not masked
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const fs::path dir = test_tmp() / (std::string("gui_long_click_") + language);
      fs::remove_all(dir);
      fs::create_directories(dir / "run");
      const std::string q = shell_quote(dir.string());
      // A point of a widget's rectangle at fractions (fx, fy), once the live record has it.
      std::ofstream(dir / "point.py") << R"(import json, sys, time
path, name, fx, fy = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
for _ in range(600):
    try:
        r = json.load(open(path)).get("widgets", {}).get(name)
    except (OSError, ValueError):
        r = None
    if r:
        print(int(r["x"] + fx * r["w"]), int(r["y"] + fy * r["h"]))
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
)";
      auto move = [&](const std::string& name, double fx, double fy) {
        return "xy=$(python3 " + q + "/point.py " + q + "/layout.json " + name + " " + std::to_string(fx) + " " +
               std::to_string(fy) + ") && xdotool mousemove --window $wid $xy\n";
      };
      const json shown = drive_window(
          dir,
          long_input_flags() + " --layer 1 --size 1280x720 --language " + language + " --layout-live",
          "await '\"heads.long_head.0\"'\n"
          "sleep 2\n" + move("heads.long_head.0", 0.003, 0.9) +
          "sleep 1.5\n"
          "cp " + q + "/layout.json " + q + "/hover_block.json\n"
          "xdotool click 4\n"  // the wheel (a double-click's two clicks may land in one frame of a loaded machine)
          "await '\"long_zoom.map\"'\n"
          "sleep 1\n" + move("long_zoom.map", 0.52, 0.52) +
          "sleep 1.5\n"
          "cp " + q + "/layout.json " + q + "/hover_cell.json\n"
          "click_on long_zoom.save_png\n"
          "await 'attnscope-long-L1-H0-[^\"]*\\.png'\n"
          "click_on long_zoom.save_svg\n"
          "await 'attnscope-long-L1-H0-[^\"]*\\.svg'\n"
          "click_on long_zoom.save_csv\n"
          "await 'attnscope-long-L1-H0-[^\"]*\\.csv'\n",
          "cd " + shell_quote((dir / "run").string()) + "\n");
      CHECK(shown.at("error") == "");
      bool zoom_window = false;
      for (const json& w : shown.at("windows")) zoom_window = zoom_window || w.at("title").get<std::string>().ends_with("###long_zoom");
      CHECK(zoom_window);
      const TileRecord tile = tile_of(shown, 0);
      const model::PooledMap pooled = model::pool_head(*f.head_maps, 1, 0, model::Pooling::max, tile.pixels);
      {  // the block's tooltip: its token ranges and its max
        const std::vector<std::string> texts = all_texts(read_json(dir / "hover_block.json"));
        INFO(joined(texts));
        std::smatch match;
        const std::string all = joined(texts);
        const std::regex re(zh ? "查询 (\\d+)(?:–(\\d+))? · 键 (\\d+)(?:–(\\d+))?" : "queries (\\d+)(?:–(\\d+))? · keys (\\d+)(?:–(\\d+))?");
        REQUIRE(std::regex_search(all, match, re));
        const int r = std::stoi(match[1]) / pooled.block, c = std::stoi(match[3]) / pooled.block;
        CHECK(c == 0);  // the pointer is on the sink column
        const std::regex value(zh ? "该块中最大的概率：([0-9.e+−-]+)" : "largest probability of the block: ([0-9.e+−-]+)");
        std::smatch v;
        REQUIRE(std::regex_search(all, v, value));
        CHECK(std::stod(v[1]) == doctest::Approx(double(pooled.values(r, c))).epsilon(5e-3));
      }
      {  // an exact cell's tooltip: its query and key and the engine's value
        const std::vector<std::string> texts = all_texts(read_json(dir / "hover_cell.json"));
        const std::string all = joined(texts);
        INFO(all);
        std::smatch qm, km, pm;
        REQUIRE(std::regex_search(all, qm, std::regex(zh ? "查询 (\\d+)：" : "query (\\d+): ")));
        REQUIRE(std::regex_search(all, km, std::regex(zh ? "键 (\\d+)：" : "key (\\d+): ")));
        const int qi = std::stoi(qm[1]), ki = std::stoi(km[1]);
        CHECK(qi >= 0);
        CHECK(qi < T);
        CHECK(ki <= qi);  // far below the diagonal: a key the query sees
        REQUIRE(std::regex_search(all, pm, std::regex(zh ? "概率：([0-9.e+−-]+)" : "probability: ([0-9.e+−-]+)")));
        CHECK(std::stod(pm[1]) == doctest::Approx(double(head0(qi, ki))).epsilon(5e-3));
      }
      // Save PNG/SVG/CSV of the head: the CLI's export of the same head, pixels and language.
      const std::string args = "export --checkpoint " + shell_quote(model_fixture(fixture).string()) + " --ids " +
                               ids_arg(ids) + " --long --layer 1 --what head:0 --pool max --pixels " +
                               std::to_string(tile.pixels) + " --language " + language;
      for (const char* format : {"png", "svg", "csv"}) {
        CAPTURE(format);
        const fs::path saved = only_file(dir / "run" / "exports", "attnscope-long-", std::string(".") + format);
        REQUIRE_FALSE(saved.empty());
        const fs::path cli = dir / (std::string("cli.") + format);
        REQUIRE(run_cli(args + " --format " + format + " --out " + shell_quote(cli.string())).exit_code == 0);
        CHECK(read_file(saved, 1 << 26) == read_file(cli, 1 << 26));
      }
    }
  }

  TEST_CASE("a long input's Model view: every layer's heads pooled to the thumbnails, each the CLI's overview at their pixels") {
    const std::vector<int32_t> ids = long_input_ids();
    const int T = int(ids.size());
    const auto m = model::open(model_fixture(fixture));
    const int L = m->config.layers, H = m->config.heads;
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const fs::path dir = test_tmp() / (std::string("gui_long_model_view_") + language);
      fs::create_directories(dir);
      const WindowRun w = run_window(std::string("long_model_view_") + language,
                                     long_input_flags() + " --frames 8 --show-model-view --language " + language);
      const std::vector<std::string> texts = all_texts(w.layout);
      INFO(joined(texts));
      CHECK(w.layout.at("error") == "");
      CHECK_FALSE(shows(texts, zh ? "个词元，因此它的头按需逐个计算" : "tokens, so its heads are computed one at a time on demand"));
      // The scripted run waits for the prefetch: every head cached, every thumbnail drawn.
      CHECK(shows(texts, zh ? "已缓存的概览：" + std::to_string(L * H) + " / " + std::to_string(L * H) + " 个头（" +
                                  std::to_string(L) + " / " + std::to_string(L) + " 层）"
                            : "overviews cached: " + std::to_string(L * H) + " of " + std::to_string(L * H) + " heads (" +
                                  std::to_string(L) + " of " + std::to_string(L) + " layers)"));
      CHECK(w.layout.at("thumbs").size() == size_t(L * H));
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
          CAPTURE(l);
          CAPTURE(h);
          const TileRecord tile = tile_named(w.layout, "model_view.long_thumb." + std::to_string(l) + "." + std::to_string(h));
          CHECK(tile.block == model::pool_block(T, tile.pixels));
          CHECK(tile.rows == (T + tile.block - 1) / tile.block);
          CHECK(tile.block > 1);
          if (h == 0 && l == 0) {
            const std::string b = std::to_string(tile.block);
            CHECK(shows(texts, zh ? "每个头" + b + "×" + b + " 最大池化" : "each head max-pooled " + b + "×" + b));
          }
          if ((l * H + h) % 3 != 0) continue;  // a third of them against the CLI (each a forward pass)
          const NpyArray a = cli_npy(dir, ids, h, tile.pixels, l);
          REQUIRE(a.shape == std::vector<int64_t>{tile.rows, tile.rows});
          CHECK(differing_blocks(w.png, tile, a) == 0);
        }
    }
  }

  TEST_CASE("a long input through the X server: after the prefetch, a click on a Model view thumbnail and max|mean make no map") {
    const auto m = model::open(model_fixture(fixture));
    const int L = m->config.layers, H = m->config.heads;
    REQUIRE(L >= 2);
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const fs::path dir = test_tmp() / (std::string("gui_long_cache_") + language);
      fs::remove_all(dir);
      fs::create_directories(dir);
      const std::string q = shell_quote(dir.string());
      // wait.py RECORD OUT CONDITION: once the live record satisfies the Python condition (over r, the record, and
      // texts, its texts joined), copies it to OUT (up to 60 s; exit 1 after that).
      std::ofstream(dir / "wait.py") << R"(import json, shutil, sys, time
path, out, condition = sys.argv[1], sys.argv[2], sys.argv[3]
for _ in range(600):
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        time.sleep(0.1)
        continue
    texts = "\n".join(t["text"] for t in r.get("texts", []))
    if r.get("settled") and eval(condition):
        json.dump(r, open(out, "w"))
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
)";
      auto wait = [&](const std::string& out, const std::string& condition) {
        return "python3 " + q + "/wait.py " + q + "/layout.json " + q + "/" + out + " " + shell_quote(condition) + "\n";
      };
      const std::string every_layer = zh ? "（" + std::to_string(L) + " / " + std::to_string(L) + " 层）"
                                         : "(" + std::to_string(L) + " of " + std::to_string(L) + " layers)";
      const std::string thumbs_done =
          "all('block=' in r['widgets'].get('model_view.long_thumb.%d.%d' % (l, h), {}).get('text', '') "
          "for l in range(" + std::to_string(L) +
          ") for h in range(" + std::to_string(H) + "))";
      const std::string layer1 = zh ? "第 1 层（共 " + std::to_string(L) + " 层）" : "layer 1 of " + std::to_string(L) + " ·";
      const json last = drive_window(
          dir,
          long_input_flags() + " --layer 0 --size 1280x720 --language " + language + " --layout-live",
          "await '\"heads.long_head.0\"'\n" + wait("heads_done.json", "'" + every_layer + "' in texts") +
              "click_on checkpoint.show_model_view\n" +
              wait("prefetched.json", thumbs_done + " and '" + every_layer + "' in texts") +
              "click_on model_view.long_thumb.1.2\n" +
              wait("layer1.json", "'" + layer1 + "' in texts and 'heads.long_head.0' in r['widgets']") +
              "click_on heads.long_mean\n" +
              wait("mean.json", std::string("'") + (zh ? "平均池化" : "mean-pooled") + "' in texts and '" + layer1 + "' in texts"));
      CHECK(last.at("error") == "");
      const json prefetched = read_json(dir / "prefetched.json");
      const json layer1_record = read_json(dir / "layer1.json");
      const json mean = read_json(dir / "mean.json");
      const int64_t made = prefetched.at("long_maps_made");
      CHECK(made >= L * H);  // every head's map made once at least (by the request or the prefetch)
      // The layer change (a click on a thumbnail of layer 1) and max → mean: from the cache, no map made.
      CHECK(layer1_record.at("long_maps_made").get<int64_t>() == made);
      CHECK(mean.at("long_maps_made").get<int64_t>() == made);
      for (int h = 0; h < H; ++h) CHECK(layer1_record.at("widgets").contains("heads.long_head." + std::to_string(h)));
      CHECK(layer1_record.at("view") == "heads");
    }
  }
}

}  // namespace attnscope::test
