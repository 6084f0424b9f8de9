// window_heads_long.cpp — the Heads view of a long input (issue 38 item 6; core/long_heads.h).
//
// A checkpoint's input whose whole [L, H, T, T] stack is beyond model::stack_fits runs with each head's map
// computed on demand: the compute worker pools the layer's heads (max or mean over b×b blocks, b = ⌈T / pixels⌉,
// `pixels` the side of a head's tile on screen) and the view draws them as the Heads grid draws heads, each on
// its own colour range (as `export --long --what head:N` draws it), the pooling named on screen. A line says
// how many tokens and what the pass kept; max|mean switch the pooling. Hover a block: its token ranges and its
// max or mean. Double-click (or wheel up over) a block: the zoom window shows the exact cells around it with
// their query and key tokens; hover a cell for its exact value; double-click a cell to centre the zoom on it.
// The worker makes all of it: the frame only draws (the old heads stay until the new ones arrive).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include "attnscope/attention/weights.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/io/file_io.h"
#include "core/user_path.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {

std::string LongBlockRange(const model::PooledMap& m, int b) {
  const int first = b * m.block, last = std::min(m.tokens, first + m.block) - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "\u2013" + std::to_string(last);
}

std::string LongPoolingName(const model::PooledMap& m) {
  if (m.block == 1) return tr("exact cells");
  return m.pooling == model::Pooling::max ? trf("max-pooled %d×%d", m.block, m.block)
                                          : trf("mean-pooled %d×%d", m.block, m.block);
}

void LongBlockTooltipLines(const model::PooledMap& m, int r, int c, const std::vector<std::string>& labels) {
  if (m.block == 1) {
    ImGui::TextUnformatted(trf("query %d: %s", r, labels[size_t(r)].c_str()).c_str());
    ImGui::TextUnformatted(trf("key %d: %s", c, labels[size_t(c)].c_str()).c_str());
  } else {
    ImGui::TextUnformatted(trf("queries %s · keys %s", LongBlockRange(m, r).c_str(), LongBlockRange(m, c).c_str()).c_str());
  }
  if (m.is_masked(r, c)) ImGui::TextUnformatted(tr("masked"));
  else if (m.block == 1) ImGui::TextUnformatted(trf("probability: %s", FormatValue(m.values(r, c)).c_str()).c_str());
  else
    ImGui::TextUnformatted((m.pooling == model::Pooling::max ? trf("largest probability of the block: %s", FormatValue(m.values(r, c)).c_str())
                                                             : trf("mean probability of the block: %s", FormatValue(m.values(r, c)).c_str()))
                               .c_str());
}

int LongPixels(float side, int now, int most) {
  const int fit = std::clamp(int(side) / 32 * 32, 32, most);
  // Smaller only when the tile lost an eighth: a colour bar's labels a few pixels wider (another pooling's range) do
  // not pool every head again.
  if (fit < now && side >= float(now) * 0.875f) return now;
  return fit;
}

std::string LongCacheLine(const LongOverview& o) {
  std::string line = trf("overviews cached: %d of %d heads (%d of %d layers), %s of at most %s", o.heads_cached,
                         o.layers * o.heads, o.layers_cached, o.layers, model::byte_size_text(o.cache_bytes).c_str(),
                         model::byte_size_text(o.cache_ceiling).c_str());
  if (o.cache_full) line += tr(" · the cache is full: other heads are computed when shown");
  return line;
}

namespace {

void Upload(AppState& state, const std::shared_ptr<const LongHeads>& l) {
  HeadsWindowState& w = state.heads;
  if (w.long_uploaded == l.get()) return;
  w.long_textures.resize(l->pictures.size());
  for (size_t h = 0; h < l->pictures.size(); ++h) {
    const Picture& p = l->pictures[h];
    if (w.long_textures[h].update(p.width, p.height, std::shared_ptr<const std::vector<Rgba>>(l, &p.pixels)))
      ++state.textures.uploads;
  }
  if (l->zoom_picture.width > 0 &&
      w.long_zoom_texture.update(l->zoom_picture.width, l->zoom_picture.height,
                                 std::shared_ptr<const std::vector<Rgba>>(l, &l->zoom_picture.pixels)))
    ++state.textures.uploads;
  w.long_uploaded = l.get();
}

// Save PNG/SVG/CSV: head `head`'s pooled overview as on screen, the figure `export --long --what head:N --layer L
// --pixels P --pool max|mean` writes (pooled_figure.h), under exports/ in the current folder.
void Save(AppState& state, const LongHeads& l, int head, ExportFormat format) {
  SaveToExports(
      state,
      [&](const std::string& stamp) {
        char name[128];
        std::snprintf(name, sizeof name, "attnscope-long-L%d-H%d-%s.%s", l.layer, head, stamp.c_str(), to_string(format));
        return std::string(name);
      },
      [&](const std::filesystem::path& path) {
        ExportRequest request = long_export_request(l.colormap);
        request.format = format;
        request.words = UiFigureWords();
        const std::string bytes =
            render_pooled(PooledFigureInput{&l.heads[size_t(head)], l.layer, head, l.model_name}, request).bytes;
        write_file_atomic(path, bytes);
        return bytes.size();
      });
}

void OpenZoom(AppState& state, const LongHeads& l, int head, int row, int col) {
  state.heads.long_zoom = long_zoom_around(l.tokens, head, row, col);
  NoteEdit(state, Panel::heads);
}

}  // namespace

void DrawLongHeads(AppState& state) {
  const std::shared_ptr<const LongHeads> l = state.long_heads;
  HeadsWindowState& w = state.heads;
  Upload(state, l);
  state.qk.open = false;  // "why does this head attend here?" needs the layer's whole detail: not for a long input
  const int H = int(l->heads.size());
  if (H == 0) return;
  const model::PooledMap& first = l->heads.front();
  WrappedText(trf("long input: %d tokens, heads computed on demand, %s of queries and keys kept", l->tokens,
                  model::byte_size_text(l->kept_bytes).c_str()));
  RecordLastItem(state, "heads.long_input");
  // How far the worker's cache and prefetch went: a layer change within it draws at once.
  if (state.long_overview) {
    WrappedText(LongCacheLine(*state.long_overview));
    RecordLastItem(state, "heads.long_cache");
  }
  // The pooling: max keeps a sink column and a window's band as bright as their brightest cell.
  bool edited = false;
  if (ImGui::RadioButton(tr("max"), w.long_pooling == model::Pooling::max) && w.long_pooling != model::Pooling::max) {
    w.long_pooling = model::Pooling::max;
    edited = true;
  }
  RecordLastItem(state, "heads.long_max");
  ImGui::SameLine();
  if (ImGui::RadioButton(tr("mean"), w.long_pooling == model::Pooling::mean) && w.long_pooling != model::Pooling::mean) {
    w.long_pooling = model::Pooling::mean;
    edited = true;
  }
  RecordLastItem(state, "heads.long_mean");
  const std::string pooled = trf("layer %d of %d · each head %s", l->layer, l->layers, LongPoolingName(first).c_str());
  SameLineIfFits(ImGui::CalcTextSize(pooled.c_str()).x);
  ImGui::TextUnformatted(pooled.c_str());
  RecordLastItem(state, "heads.long_pooling");
  if (state.worker && state.worker->seconds_busy() >= 0.1) {
    SameLineIfFits(ImGui::GetFontSize() * 9);
    BusyIndicator(state);
  }
  HintText(tr("rows: queries ↓ · columns: keys → · double-click or wheel: exact cells around the pointer"));
  if (edited) NoteEdit(state, Panel::heads);

  // Row and column labels: the blocks' token ranges (the tokens themselves when the cells are exact).
  std::vector<std::string> block_labels;
  if (first.block == 1) {
    block_labels = CachedLabels(state, w.long_labels, l->labels).labels;
  } else {
    for (int b = 0; b < first.rows; ++b) block_labels.push_back(LongBlockRange(first, b));
  }
  float extent = 0;
  for (const std::string& s : block_labels) extent = std::max(extent, ImGui::CalcTextSize(s.c_str()).x);
  HeatmapGridSpec spec;
  spec.count = H;
  spec.rows = first.rows;
  spec.cols = first.cols;
  spec.texture = [&w](int h) { return w.long_textures[size_t(h)].id(); };
  const int groups = std::max(1, l->kv_heads);
  spec.frame_color = [H, groups](int h) { return KvGroupColor(kv_group_of_head(h, H, groups)); };
  spec.caption_forms = 3;
  spec.captions = [H, groups](int h, int form) {
    const int g = kv_group_of_head(h, H, groups);
    if (form == 0) return trf("head %d · kv group %d", h, g);
    if (form == 1) return "h" + std::to_string(h) + " · g" + std::to_string(g);
    return std::to_string(h);
  };
  spec.row_labels = spec.col_labels = &block_labels;
  spec.labels_extent = extent;
  spec.shared_scale = false;  // each head on its own range, as its export
  spec.range = [&l](int h) { return l->pictures[size_t(h)].range; };
  spec.colormap = l->colormap;
  spec.value_name = TrKey("probability");
  spec.masked = true;
  const HeatmapGridResult grid = DrawHeatmapGrid(spec, w.bar, state.ui_scale, &state.layout);
  // Blocks a side: a tile's side in framebuffer pixels, in steps of 32 (a window resized by a few pixels pools
  // nothing again); the tile's size does not depend on its cells, so this settles at once.
  if (grid.image_size.x > 0) {
    const int pixels = LongPixels(grid.image_size.x * state.framebuffer_scale.x, w.long_pixels, 1024);
    if (pixels != w.long_pixels) {
      w.long_pixels = pixels;
      NoteEdit(state, Panel::heads);
    }
  }
  const ImVec2 s = state.framebuffer_scale;
  for (int h = 0; h < H && h < int(grid.image_min.size()); ++h) {  // where each pooled head went (tests hover it)
    const ImVec2 min = grid.image_min[size_t(h)];
    const model::PooledMap& m = l->heads[size_t(h)];
    state.layout.widgets.push_back({"heads.long_head." + std::to_string(h), ImVec2(min.x * s.x, min.y * s.y),
                                    ImVec2((min.x + grid.image_size.x) * s.x, (min.y + grid.image_size.y) * s.y),
                                    "pixels=" + std::to_string(l->pixels) + " block=" + std::to_string(m.block) +
                                        " rows=" + std::to_string(m.rows)});
  }
  if (grid.hovered < 0) return;
  const model::PooledMap& m = l->heads[size_t(grid.hovered)];
  const int r = grid.row, c = grid.col;
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(trf("head %d · kv group %d", grid.hovered, kv_group_of_head(grid.hovered, H, groups)).c_str());
  ImGui::Separator();
  LongBlockTooltipLines(m, r, c, l->labels);
  ImGui::TextDisabled("%s", tr("double-click or wheel: exact cells around here"));
  ImGui::EndTooltip();
  if (grid.double_clicked || grid.wheel > 0) {
    // The token at the pointer: the block's cell and the fraction of it under the pointer.
    const int row = std::min(l->tokens - 1, int(grid.pointer_cells.y * float(m.block)));
    const int col = std::min(l->tokens - 1, int(grid.pointer_cells.x * float(m.block)));
    OpenZoom(state, *l, grid.hovered, row, col);
  }
}

void DrawLongZoom(AppState& state) {
  HeadsWindowState& w = state.heads;
  const LongHeads* l = CurrentLongHeads(state);
  if (!l || !w.long_zoom) return;
  const LongZoom z = *w.long_zoom;
  PlaceNextWindow(state, Slot::view);
  const std::string title = trf("Head %d · exact cells", z.head) + "###long_zoom";
  bool open = true;
  if (ImGui::Begin(title.c_str(), &open, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::TextUnformatted(trf("layer %d · head %d · queries %d–%d · keys %d–%d of %d tokens", l->layer, z.head, z.row0,
                               z.row0 + z.size - 1, z.col0, z.col0 + z.size - 1, l->tokens).c_str());
    RecordLastItem(state, "long_zoom.range");
    // The head's pooled overview as the Heads view draws it, saved as `export --long` writes it.
    if (z.head < int(l->heads.size())) {
      ImGui::TextUnformatted(trf("head %d's overview, %s:", z.head, LongPoolingName(l->heads[size_t(z.head)]).c_str()).c_str());
      SaveFigureButtons(state, "long_zoom", false, [&](ExportFormat format) { Save(state, *l, z.head, format); });
    }
    HintText(tr("double-click a cell: centre the exact cells on it"));
    if (!l->zoom || !(*l->zoom == z) || l->zoom_picture.width == 0) {
      SpinnerText(tr("computing…"));
      if (!state.scene_edited && state.result_generation >= state.submitted_generation && !l->zoom)
        w.long_zoom.reset();  // the newest result dropped it (another input): close
    } else {
      std::vector<std::string> rows, cols;
      const LabelCache& labels = CachedLabels(state, w.long_labels, l->labels);
      for (int i = 0; i < z.size; ++i) rows.push_back(labels.labels[size_t(z.row0 + i)]);
      for (int i = 0; i < z.size; ++i) cols.push_back(labels.labels[size_t(z.col0 + i)]);
      HeatmapGridSpec spec;
      spec.count = 1;
      spec.rows = spec.cols = z.size;
      spec.texture = [&w](int) { return w.long_zoom_texture.id(); };
      const int H = int(l->heads.size()), groups = std::max(1, l->kv_heads);
      spec.frame_color = [&](int) { return KvGroupColor(kv_group_of_head(z.head, H, groups)); };
      spec.row_labels = &rows;
      spec.col_labels = &cols;
      spec.labels_extent = labels.extent;
      spec.shared_scale = true;
      spec.shared_range = l->zoom_picture.range;
      spec.colormap = l->colormap;
      spec.value_name = TrKey("probability");
      spec.scale_note = " · " + std::string(tr("exact cells"));
      spec.masked = true;
      const HeatmapGridResult grid = DrawHeatmapGrid(spec, w.bar, state.ui_scale, &state.layout);
      if (!grid.image_min.empty()) {
        const ImVec2 s = state.framebuffer_scale, min = grid.image_min[0];
        state.layout.widgets.push_back({"long_zoom.map", ImVec2(min.x * s.x, min.y * s.y),
                                        ImVec2((min.x + grid.image_size.x) * s.x, (min.y + grid.image_size.y) * s.y)});
      }
      if (grid.hovered >= 0) {
        const int q = z.row0 + grid.row, k = z.col0 + grid.col;
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(trf("head %d · kv group %d", z.head, kv_group_of_head(z.head, H, groups)).c_str());
        ImGui::Separator();
        ImGui::TextUnformatted(trf("query %d: %s", q, l->labels[size_t(q)].c_str()).c_str());
        ImGui::TextUnformatted(trf("key %d: %s", k, l->labels[size_t(k)].c_str()).c_str());
        if (model::MapMask{l->window}.masked(q, k)) ImGui::TextUnformatted(tr("masked"));
        else ImGui::TextUnformatted(trf("probability: %s", FormatValue(l->zoom_values(grid.row, grid.col)).c_str()).c_str());
        ImGui::EndTooltip();
        if (grid.double_clicked) OpenZoom(state, *l, z.head, q, k);
      }
    }
  }
  ImGui::End();
  if (!open) {
    w.long_zoom.reset();
    NoteEdit(state, Panel::heads);
  }
}

}  // namespace attnscope::gui
