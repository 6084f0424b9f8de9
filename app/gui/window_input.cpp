// window_input.cpp — the Input window: a sentence (with English and Chinese samples), a tensor file
// or a 2D grid (pattern or image, rows × cols), and the tokens the engine made of it.
#include <algorithm>
#include <filesystem>
#include <string>

#include "attnscope/core/limits.h"
#include "gui/persistence.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

struct Sample {
  const char* title;
  const char* text;
};
constexpr Sample samples[] = {
    {TrKey("English: the cat"), "The cat sat on the mat because it was tired."},
    {TrKey("English: it = the animal?"), "The animal didn't cross the street because it was too tired."},
    {TrKey("English: pangram"), "The quick brown fox jumps over the lazy dog."},
    {TrKey("Chinese: I like basketball"), "我喜欢打篮球"},
    {TrKey("Chinese: attention lesson"), "今天我们学习注意力机制，每个头看不同的词。"},
    {TrKey("Mixed: English + Chinese"), "Attention 注意力 is all you need."},
    {TrKey("Longer: a paragraph"),
     "Attention lets every token look at every other token. Each head learns its own way of looking: "
     "one follows the previous word, another finds the subject, a third spreads evenly. Grouped "
     "heads share keys and values, which saves memory when the model writes long answers."},
};

const char* const patterns[] = {TrKey("checkerboard"), TrKey("gradient"), TrKey("rings"), TrKey("glyph"), TrKey("noise")};

void DrawTokenizerChoice(AppState& state);

void DrawSentenceInput(AppState& state) {
  InputSettings& in = state.scene.input;
  const float lines = 3.2f;
  if (ImGui::InputTextMultiline("##sentence", &in.text,
                                ImVec2(-1.0f, ImGui::GetTextLineHeightWithSpacing() * lines))) {
    state.fonts->request_text(in.text);
    NoteEdit(state, Panel::input);
  }
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::BeginCombo("##samples", tr("Sample sentences…"))) {
    for (const Sample& s : samples) {
      if (ImGui::Selectable(tr(s.title))) {
        in.text = s.text;
        state.fonts->request_text(in.text);
        SelectQuery(state, -1);
        NoteEdit(state, Panel::input);
      }
      if (ImGui::IsItemHovered()) {
        state.fonts->request_text(s.text);
        ImGui::SetTooltip("%s", s.text);
      }
    }
    ImGui::EndCombo();
  }
  DrawTokenizerChoice(state);
}

// Remembers a tokenizer path that loaded, newest first, without repeats.
void RememberTokenizer(InputWindowState& ui, const std::string& path) {
  auto& recent = ui.recent_tokenizers;
  recent.erase(std::remove(recent.begin(), recent.end(), path), recent.end());
  recent.insert(recent.begin(), path);
  if (recent.size() > max_recent_tokenizers) recent.resize(max_recent_tokenizers);
}

// A real model's tokenizer for the sentence (a tokenizer.json, a vocab.json with merges.txt beside it,
// or a model folder), or SPEC's words and ideographs. The path applies with Load; a file that cannot be
// read shows the engine's message under the Input window (Panel::input), like any other input error.
void DrawTokenizerChoice(AppState& state) {
  InputSettings& in = state.scene.input;
  InputWindowState& ui = state.input;
  if (!ui.tokenizer_path_shown) {
    ui.tokenizer_path = in.tokenizer_path;
    ui.tokenizer_path_shown = true;
  }
  // A path that analysed without an error goes to the recent list.
  if (!in.tokenizer_path.empty() && state.analysis && state.analysis->attention &&
      state.analysis->scene.input.tokenizer_path == in.tokenizer_path && ErrorFor(state, Panel::input).empty() &&
      (ui.recent_tokenizers.empty() || ui.recent_tokenizers.front() != in.tokenizer_path))
    RememberTokenizer(ui, in.tokenizer_path);
  auto apply = [&](const std::string& path) {
    in.tokenizer_path = path;
    ui.tokenizer_path = path;
    SelectQuery(state, -1);
    NoteEdit(state, Panel::input);
  };
  // One row: label, path, Load, Words, and ▾ for the recent paths.
  const ImGuiStyle& style = ImGui::GetStyle();
  const bool recent = !ui.recent_tokenizers.empty();
  const float buttons = ImGui::CalcTextSize(tr("Load##tokenizer"), nullptr, true).x +
                        ImGui::CalcTextSize(tr("Words##tokenizer"), nullptr, true).x + style.FramePadding.x * 4 +
                        style.ItemSpacing.x * 2 + (recent ? ImGui::GetFrameHeight() + style.ItemSpacing.x : 0.0f);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("tokenizer"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - buttons, 60.0f));
  const bool enter = ImGui::InputTextWithHint("##tokenizer", tr("words (no model)"), &ui.tokenizer_path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::IsItemEdited()) state.fonts->request_text(ui.tokenizer_path);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s\n%s", in.tokenizer_path.empty() ? tr("now: words and ideographs (no model)") : in.tokenizer_path.c_str(),
                      tr("A real model's tokenizer: its tokenizer.json, its vocab.json (merges.txt beside it), "
                         "or the model's folder. The heatmaps then show the model's own tokens."));
  ImGui::SameLine();
  if ((ImGui::Button(tr("Load##tokenizer")) || enter) && ui.tokenizer_path != in.tokenizer_path)
    apply(ui.tokenizer_path);
  ImGui::SameLine();
  ImGui::BeginDisabled(in.tokenizer_path.empty());
  if (ImGui::Button(tr("Words##tokenizer"))) apply("");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Back to the math contract's words and ideographs"));
  if (recent) {
    ImGui::SameLine();
    if (ImGui::BeginCombo("##recent_tokenizers", "", ImGuiComboFlags_NoPreview | ImGuiComboFlags_PopupAlignLeft)) {
      for (const std::string& path : ui.recent_tokenizers)
        if (ImGui::Selectable(path.c_str(), path == in.tokenizer_path) && path != in.tokenizer_path) {
          const std::string chosen = path;  // apply() may reorder the list being drawn
          apply(chosen);
          break;
        }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("Recent tokenizers"));
  }
}

void DrawTensorInput(AppState& state) {
  InputSettings& in = state.scene.input;
  if (state.input.tensor_path.empty()) state.input.tensor_path = in.tensor_path;
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4, 60.0f));
  const bool enter = ImGui::InputTextWithHint("##tensor", tr("X.npy, float32 [T, C]"), &state.input.tensor_path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button(tr("Load##tensor")) || enter) {
    in.tensor_path = state.input.tensor_path;
    NoteEdit(state, Panel::input);
  }
  ImGui::TextDisabled("%s", tr("Rows are tokens, columns the model width C."));
}

void DrawGridInput(AppState& state) {
  GridSettings& grid = state.scene.input.grid;
  bool edited = false;
  const bool image = !grid.image_path.empty();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::BeginCombo(tr("pattern"), image ? tr("(image)") : tr(grid.pattern.c_str()))) {
    for (const char* p : patterns)
      if (ImGui::Selectable(tr(p), !image && grid.pattern == p)) {
        grid.pattern = p;
        grid.image_path.clear();
        edited = true;
      }
    ImGui::EndCombo();
  }
  if (grid.pattern == "noise" && !image) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    const uint64_t one = 1;
    edited |= ImGui::InputScalar((std::string(tr("noise seed")) + "###noise_seed").c_str(), ImGuiDataType_U64, &grid.seed, &one, &one, "%llu");
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  int rows = grid.rows, cols = grid.cols;
  if (ImGui::SliderInt(tr("rows"), &rows, 2, limits::max_grid_side, "%d", ImGuiSliderFlags_AlwaysClamp)) {
    grid.rows = std::clamp(rows, 2, limits::max_grid_side);
    edited = true;
  }
  SameLineIfFits(ImGui::GetFontSize() * 8 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(tr("cols")).x);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::SliderInt(tr("cols"), &cols, 2, limits::max_grid_side, "%d", ImGuiSliderFlags_AlwaysClamp)) {
    grid.cols = std::clamp(cols, 2, limits::max_grid_side);
    edited = true;
  }
  if (state.input.image_path.empty()) state.input.image_path = grid.image_path;
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4, 60.0f));
  const bool enter = ImGui::InputTextWithHint("##image", tr("or an image: PNG / JPEG path"), &state.input.image_path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button(tr("Load##image")) || enter) {
    grid.image_path = state.input.image_path;
    edited = true;
  }
  if (edited) NoteEdit(state, Panel::input);
}

// The tokens as small buttons that wrap; clicking one selects it as the query everywhere.
void DrawTokenList(AppState& state) {
  if (!state.analysis || !state.analysis->attention) return;
  const AttentionAnalysis& att = *state.analysis->attention;
  ImGui::TextUnformatted(trcount(int(att.labels.size()), TrKey("1 token"), TrKey("%d tokens")).c_str());
  const char* hint = tr("click one to select it as the query");
  SameLineIfFits(ImGui::CalcTextSize(hint).x);  // below the count in a narrow column (a large UI scale)
  ImGui::TextDisabled("%s", hint);
  ImGui::BeginChild("tokens", ImVec2(0, 0), true);
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const ImGuiStyle& style = ImGui::GetStyle();
  const int selected = state.scene.view.selected_query;
  for (int i = 0; i < int(att.labels.size()); ++i) {
    const std::string text = std::to_string(i) + " " + state.fonts->display_label(att.labels[size_t(i)]);
    const float w = ImGui::CalcTextSize(text.c_str()).x + style.FramePadding.x * 2;
    if (i > 0) {
      ImGui::SameLine();
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    const bool is_selected = i == selected;
    if (is_selected) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_HeaderActive));
    ImGui::PushID(i);
    if (ImGui::SmallButton(text.c_str())) SelectQuery(state, is_selected ? -1 : i);
    if (ImGui::IsItemHovered())
      if (const std::string detail = TokenDetail(att, i); !detail.empty()) ImGui::SetTooltip("%s", detail.c_str());
    ImGui::PopID();
    if (is_selected) ImGui::PopStyleColor();
  }
  ImGui::EndChild();
}

}  // namespace

void DrawInputWindow(AppState& state) {
  if (!state.show_input) return;
  PlaceNextWindow(state, Slot::input);
  if (!ImGui::Begin(WindowTitle("Input", "input").c_str(), &state.show_input)) {
    ImGui::End();
    return;
  }
  InputSettings& in = state.scene.input;
  const std::pair<InputSource, const char*> sources[] = {
      {InputSource::text, TrKey("sentence")}, {InputSource::tensor, TrKey("tensor X.npy")}, {InputSource::grid, TrKey("2D grid")}};
  for (const auto& [source, name] : sources) {
    if (source != InputSource::text) ImGui::SameLine();
    if (ImGui::RadioButton(tr(name), in.source == source) && in.source != source) {
      in.source = source;
      SelectQuery(state, -1);
      NoteEdit(state, Panel::input);
    }
  }
  if (state.checkpoint.attentions && state.scene.view.view == View::heads)
    NoticeText(tr("An attentions file is open: the Heads view draws the file's own tokens, not this input."));
  switch (in.source) {
    case InputSource::text: DrawSentenceInput(state); break;
    case InputSource::tensor: DrawTensorInput(state); break;
    case InputSource::grid: DrawGridInput(state); break;
  }
  ErrorText(ErrorFor(state, Panel::input));
  ErrorText(ErrorFor(state, Panel::startup));
  NoticeText(state.fonts->notice());
  if (in.source != InputSource::grid) DrawTokenList(state);
  ImGui::End();
}

}  // namespace attnscope::gui
