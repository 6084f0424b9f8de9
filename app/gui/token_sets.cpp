// token_sets.cpp — token sets in the window (token_sets.h).
#include "gui/token_sets.h"

#include <algorithm>

#include "attnscope/analysis/token_set.h"
#include "gui/i18n.h"
#include "gui/widgets.h"

namespace attnscope::gui {
std::string TokenSetName(const TokenSet& set) { return trf(token_set_label_key(set), int(set.tokens.size())); }

namespace {
std::string SetLabel(const TokenSet& set) { return TokenSetName(set); }
}  // namespace

void ToggleTokenInSet(AppState& state, TokenSetAxis axis, int token) {
  TokenSet& set = state.scene.view.token_set;
  if (set.axis != axis) {
    set.axis = axis;
    set.tokens.clear();
  }
  const auto at = std::lower_bound(set.tokens.begin(), set.tokens.end(), token);
  if (at != set.tokens.end() && *at == token) set.tokens.erase(at);
  else set.tokens.insert(at, token);
  if (set.tokens.empty()) set.axis = TokenSetAxis::none;
  NoteEdit(state, Panel::heads);  // the pictures draw it
}

void SetTokenRange(AppState& state, TokenSetAxis axis, int first, int last) {
  TokenSet& set = state.scene.view.token_set;
  std::vector<int> tokens;
  for (int t = std::min(first, last); t <= std::max(first, last); ++t) tokens.push_back(t);
  if (set.axis == axis && set.tokens == tokens) return;
  set.axis = axis;
  set.tokens = std::move(tokens);
  NoteEdit(state, Panel::heads);
}

void ClearTokenSet(AppState& state) {
  if (state.scene.view.token_set.axis == TokenSetAxis::none && state.scene.view.token_set.tokens.empty()) return;
  const SetReduce reduce = state.scene.view.token_set.reduce;  // the toggle stays as chosen
  state.scene.view.token_set = TokenSet{};
  state.scene.view.token_set.reduce = reduce;
  NoteEdit(state, Panel::heads);
}

void DrawTokenSetBar(AppState& state, const std::string& prefix) {
  TokenSet& set = state.scene.view.token_set;
  if (!set.active()) return;
  const std::string text = SetLabel(set) + ": " + token_set_list(set);
  ImGui::TextUnformatted(text.c_str());
  RecordLastItem(state, prefix + ".token_set");
  SameLineIfFits(RadioWidth(tr("sum")));
  if (ImGui::RadioButton(tr("sum"), set.reduce == SetReduce::sum) && set.reduce != SetReduce::sum) {
    set.reduce = SetReduce::sum;
    NoteEdit(state, Panel::heads);
  }
  RecordLastItem(state, prefix + ".token_set_sum");
  SameLineIfFits(RadioWidth(tr("mean")));
  if (ImGui::RadioButton(tr("mean"), set.reduce == SetReduce::mean) && set.reduce != SetReduce::mean) {
    set.reduce = SetReduce::mean;
    NoteEdit(state, Panel::heads);
  }
  RecordLastItem(state, prefix + ".token_set_mean");
  ImGui::SameLine();
  if (ImGui::SmallButton("×##clear_token_set")) ClearTokenSet(state);
  RecordLastItem(state, prefix + ".token_set_clear");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("clear the token set"));
}

void TokenSetNotDrawnNote(AppState& state, const std::string& name) {
  if (!state.scene.view.token_set.active()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  WrappedText(tr("token sets are not drawn in this view"));
  ImGui::PopStyleColor();
  RecordLastItem(state, name + ".token_set_note");
}

void ApplyTokenSet(HeatmapGridSpec& spec, const AppState& state, const Pictures& pictures, const Shown& shown) {
  const TokenSet& set = state.scene.view.token_set;
  if (!set.active() || pictures.strip_axis != set.axis || pictures.strips.size() != size_t(spec.count)) return;
  const bool queries = set.axis == TokenSetAxis::queries;
  for (const int t : set.tokens) (queries ? spec.set_rows : spec.set_cols).push_back(t - (queries ? shown.row : shown.col));
  spec.strip = queries ? GridStrip::row : GridStrip::column;
  const int first = queries ? shown.col : shown.row;
  spec.strip_color = [&pictures, first](int i, int k) {
    const std::vector<Rgba>& strip = pictures.strips[size_t(i)];
    const size_t at = size_t(first + k);
    if (at >= strip.size()) return IM_COL32(0, 0, 0, 0);
    return IM_COL32(strip[at].r, strip[at].g, strip[at].b, 255);
  };
  spec.strip_label = SetLabel(set);
  spec.strip_symbol = set.reduce == SetReduce::sum ? "Σ" : "μ";
}

void HandleTokenSetHit(AppState& state, const HeatmapGridResult& grid, const std::vector<std::string>& labels,
                       const Shown& shown) {
  const ImVec2 s = state.framebuffer_scale;
  for (size_t i = 0; i < grid.strip_min.size(); ++i)
    state.layout.widgets.push_back({"heads.token_set_strip." + std::to_string(i),
                                    ImVec2(grid.strip_min[i].x * s.x, grid.strip_min[i].y * s.y),
                                    ImVec2(grid.strip_max[i].x * s.x, grid.strip_max[i].y * s.y)});
  if (grid.label_ctrl_clicked) {
    if (grid.label_row >= 0) ToggleTokenInSet(state, TokenSetAxis::queries, grid.label_row);
    else if (grid.label_col >= 0) ToggleTokenInSet(state, TokenSetAxis::keys, grid.label_col);
  } else if ((grid.label_row >= 0 || grid.label_col >= 0) && grid.axis_col < 0) {
    ImGui::SetTooltip("%s", grid.label_row >= 0 ? tr("Ctrl+click: add this query to a token set (again: take it out)")
                                                : tr("Ctrl+click: add this key to a token set (again: take it out)"));
  }
  const TokenSet& set = state.scene.view.token_set;
  const Pictures* pictures = state.pictures.get();
  if (grid.strip_hovered < 0 || !pictures || size_t(grid.strip_hovered) >= pictures->strip_values.size() || !set.active())
    return;
  const std::vector<float>& values = pictures->strip_values[size_t(grid.strip_hovered)];
  const int k = grid.strip_cell + (set.axis == TokenSetAxis::queries ? shown.col : shown.row);
  if (k < 0 || size_t(k) >= values.size() || size_t(k) >= labels.size()) return;
  const std::string where = set.axis == TokenSetAxis::queries ? trf("key %d: %s", k, labels[size_t(k)].c_str())
                                                              : trf("query %d: %s", k, labels[size_t(k)].c_str());
  ImGui::SetTooltip("%s", (trf("head %d", grid.strip_hovered) + " · " + SetLabel(set) + " (" + token_set_list(set) + ")\n" +
                           where + "\n" + FormatValue(values[size_t(k)]))
                              .c_str());
}

}  // namespace attnscope::gui
