// window_input.cpp — the Input window: a sentence (with English and Chinese samples), a tensor file
// or a 2D grid (pattern or image, rows × cols), and the tokens the engine made of it.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "attnscope/core/limits.h"
#include "core/user_path.h"
#include "gui/persistence.h"
#include "gui/i18n.h"
#include "gui/token_sets.h"
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

// ---- the sentence box, wrapped ----------------------------------------------------------------------
// ImGui 1.86's InputTextMultiline does not wrap. The box edits the sentence with a soft line break
// "\r\n" wherever a line is full (SoftLineBreaks: at spaces, between CJK characters): ImGui draws
// '\r' as nothing and the user can neither type nor paste one, so every '\r' and the '\n' after it
// are the box's own and come out again before the text goes anywhere. A callback re-wraps the text
// in the box at every frame (each key, a paste, a resize of the window), keeping the cursor on the
// same character. Deleting a soft break (Backspace at the start of a wrapped line, Delete at its end)
// deletes the sentence's character beyond it, as in any editor that wraps.
// This keeps ImGui's own editing — selection, clipboard, IME, undo — where a wrapped read-only view
// with a separate edit field would show the text twice or hide it while typing.

constexpr const char* soft_break = "\r\n";

// Which bytes of a wrapped text are soft-break characters.
std::vector<bool> SoftMask(const std::string& wrapped) {
  std::vector<bool> soft(wrapped.size(), false);
  for (size_t i = 0; i < wrapped.size(); ++i) {
    if (wrapped[i] != '\r') continue;
    soft[i] = true;
    if (i + 1 < wrapped.size() && wrapped[i + 1] == '\n') soft[i + 1] = true;
  }
  return soft;
}

// The sentence with its soft breaks, and back.
std::string Wrapped(const std::string& text, float width) {
  std::string out;
  size_t from = 0;
  for (size_t at : SoftLineBreaks(text, width)) {
    out.append(text, from, at - from).append(soft_break);
    from = at;
  }
  return out.append(text, from, std::string::npos);
}
std::string Unwrapped(const std::string& wrapped) {
  const std::vector<bool> soft = SoftMask(wrapped);
  std::string out;
  for (size_t i = 0; i < wrapped.size(); ++i)
    if (!soft[i]) out += wrapped[i];
  return out;
}
// Byte position `real` of the sentence in Wrapped(sentence): after a soft break that falls there (the
// cursor follows a word carried to the next line).
int WrappedPosition(const std::string& wrapped, size_t real) {
  const std::vector<bool> soft = SoftMask(wrapped);
  size_t seen = 0, i = 0;
  for (; i < wrapped.size(); ++i) {
    if (soft[i]) continue;
    if (seen == real) break;
    ++seen;
  }
  return int(i);
}
// Real characters of wrapped[0, end).
size_t RealBefore(const std::string& wrapped, const std::vector<bool>& soft, size_t end) {
  size_t n = 0;
  for (size_t i = 0; i < end && i < wrapped.size(); ++i) n += !soft[i];
  return n;
}

struct SentenceBox {
  float width = 0;       // the wrap width
  std::string shown;     // what the box held at the end of the last callback (always Wrapped(…))
  int cursor = 0;        // and its cursor
  int selection[2] = {0, 0};  // and its selection
};

int RewrapSentence(ImGuiInputTextCallbackData* data) {
  if (data->EventFlag != ImGuiInputTextFlags_CallbackAlways) return 0;
  SentenceBox& box = *static_cast<SentenceBox*>(data->UserData);
  const std::string now(data->Buf, size_t(data->BufTextLen));
  std::string real;
  size_t cursor = 0;  // in the real text
  if (now == box.shown) {
    real = Unwrapped(now);
    cursor = RealBefore(now, SoftMask(now), size_t(data->CursorPos));
  } else {
    // What changed since the last frame, against the last wrapped text whose soft breaks are known:
    // the common prefix and suffix are kept, the rest was removed and replaced.
    const std::string& before = box.shown;
    const std::vector<bool> soft = SoftMask(before);
    size_t p = 0;
    while (p < before.size() && p < now.size() && before[p] == now[p]) ++p;
    size_t q = 0;
    while (q < before.size() - p && q < now.size() - p && before[before.size() - 1 - q] == now[now.size() - 1 - q]) ++q;
    const size_t removed_end = before.size() - q;
    std::string inserted = now.substr(p, now.size() - q - p);
    inserted.erase(std::remove(inserted.begin(), inserted.end(), '\r'), inserted.end());
    size_t head = RealBefore(before, soft, p);                     // real characters kept before
    const size_t removed_real = RealBefore(before, soft, removed_end) - head;
    const std::string old_real = Unwrapped(before);
    size_t tail = head + removed_real;                               // where the kept rest starts
    if (removed_real == 0 && inserted.empty() && removed_end > p) {
      // Only a soft break was deleted: Backspace (the cursor was after it) takes the character before
      // it, Delete the one after it.
      const bool backspace = size_t(box.cursor) >= removed_end;
      auto utf8_start = [&](size_t i) {
        while (i > 0 && (static_cast<unsigned char>(old_real[i]) & 0xC0) == 0x80) --i;
        return i;
      };
      if (backspace && head > 0) head = utf8_start(head - 1);
      else if (!backspace && tail < old_real.size()) {
        ++tail;
        while (tail < old_real.size() && (static_cast<unsigned char>(old_real[tail]) & 0xC0) == 0x80) ++tail;
      }
    }
    real = old_real.substr(0, head) + inserted + old_real.substr(tail);
    cursor = head + inserted.size();
  }
  const std::string wrapped = Wrapped(real, box.width);
  if (wrapped != now) {
    data->DeleteChars(0, data->BufTextLen);
    data->InsertChars(0, wrapped.c_str(), wrapped.c_str() + wrapped.size());
    data->CursorPos = data->SelectionStart = data->SelectionEnd = WrappedPosition(wrapped, cursor);
  }
  box.shown = wrapped;
  box.cursor = data->CursorPos;
  box.selection[0] = data->SelectionStart, box.selection[1] = data->SelectionEnd;
  return 0;
}

// While the sentence box is drawn, ImGui's clipboard calls go through this: a copy or cut of the box
// holds a slice of the wrapped text, and the clipboard gets that slice without the box's soft breaks
// (a selection may begin or end between the '\r' and the '\n' of one). Reading (paste) is passed on.
class UnwrappedCopies {
 public:
  explicit UnwrappedCopies(const SentenceBox& box) : box_(box), io_(ImGui::GetIO()) {
    set_ = io_.SetClipboardTextFn, get_ = io_.GetClipboardTextFn, user_ = io_.ClipboardUserData;
    if (!set_) return;
    io_.ClipboardUserData = this;
    io_.SetClipboardTextFn = [](void* self, const char* text) { static_cast<UnwrappedCopies*>(self)->set(text); };
    io_.GetClipboardTextFn = [](void* self) -> const char* {
      const UnwrappedCopies& c = *static_cast<UnwrappedCopies*>(self);
      return c.get_ ? c.get_(c.user_) : nullptr;
    };
  }
  ~UnwrappedCopies() {
    if (!set_) return;
    io_.SetClipboardTextFn = set_, io_.GetClipboardTextFn = get_, io_.ClipboardUserData = user_;
  }
  UnwrappedCopies(const UnwrappedCopies&) = delete;
  UnwrappedCopies& operator=(const UnwrappedCopies&) = delete;

 private:
  void set(const char* text) {
    const std::string copied(text ? text : "");
    // Where the slice lies in the box: at the selection's start when the box's text is known.
    const size_t at = box_.shown.find(copied, size_t(std::min(box_.selection[0], box_.selection[1])));
    const size_t from = at != std::string::npos ? at : box_.shown.find(copied);
    std::string plain;
    if (from != std::string::npos) {
      const std::vector<bool> soft = SoftMask(box_.shown);
      for (size_t i = 0; i < copied.size(); ++i)
        if (!soft[from + i]) plain += copied[i];
    } else {
      plain = Unwrapped(copied);  // not the box's text: every '\r' is still a soft break
    }
    set_(user_, plain.c_str());
  }
  const SentenceBox& box_;
  ImGuiIO& io_;
  decltype(ImGuiIO::SetClipboardTextFn) set_;
  decltype(ImGuiIO::GetClipboardTextFn) get_;
  void* user_;
};

void DrawSentenceInput(AppState& state) {
  InputSettings& in = state.scene.input;
  const float lines = 3.2f;
  static SentenceBox box;  // one sentence box
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 size(-1.0f, ImGui::GetTextLineHeightWithSpacing() * lines);
  // The text's width inside the frame, with room for the scrollbar and the cursor.
  box.width = std::max(ImGui::GetContentRegionAvail().x - style.FramePadding.x * 2 - style.ScrollbarSize - 2.0f,
                       ImGui::GetFontSize() * 4);
  std::string shown = Wrapped(in.text, box.width);
  const ImGuiID id = ImGui::GetID("##sentence");
  if (ImGui::GetActiveID() != id) box.shown = shown, box.cursor = 0, box.selection[0] = box.selection[1] = 0;  // before typing starts
  bool changed = false;
  {
    UnwrappedCopies copies(box);  // Ctrl+C / Ctrl+X copy the sentence, not the box's soft breaks
    changed = ImGui::InputTextMultiline("##sentence", &shown, size, ImGuiInputTextFlags_CallbackAlways, RewrapSentence, &box);
  }
  RecordLastItem(state, "input.sentence");
  if (changed) {
    if (std::string text = Unwrapped(shown); text != in.text) {
      in.text = std::move(text);
      state.fonts->request_text(in.text);
      NoteEdit(state, Panel::input);
      state.input.typed_at = ImGui::GetTime();
    }
  }
  ImGui::SetNextItemWidth(-1.0f);
  // The preview fits the frame beside the arrow (a narrow column at a large UI scale shortens it).
  const float preview_w = ImGui::GetContentRegionAvail().x - ImGui::GetFrameHeight() - ImGui::GetStyle().FramePadding.x * 2;
  if (ImGui::BeginCombo("##samples", Ellipsize(tr("Sample sentences…"), preview_w).c_str())) {
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

// The open checkpoint's own tokenizer, named by its kind in the UI's language (the engine's description,
// with its path, is the tooltip); "ids (no tokenizer)" when the model has none and takes ids only.
std::string CheckpointTokenizerName(const CheckpointWindowState& c) {
  const Tokenizer* t = c.tokenizer.get();
  if (!t) return tr("ids (no tokenizer)");
  const int n = int(t->vocab_size());
  switch (t->kind()) {
    case TokenizerKind::byte_level_bpe: return trf("byte-level BPE (as GPT-2), %d ids", n);
    case TokenizerKind::sentencepiece_bpe: return trf("SentencePiece-style BPE (as Llama), %d ids", n);
    case TokenizerKind::bpe: return trf("BPE, %d ids", n);
    case TokenizerKind::trained_chars: return trf("vocab.json from training: characters, %d tokens", n);
    case TokenizerKind::trained_words: return trf("vocab.json from training: words, %d tokens", n);
    case TokenizerKind::trained_symbols: return trf("vocab.json from training: symbols, %d tokens", n);
    case TokenizerKind::words: break;
  }
  return tr("words and ideographs (no model)");
}

// One current model: with a checkpoint open the sentence goes through its own tokenizer, so the row names
// that one and offers none of the synthetic model's choices (a file, Words, the recent list).
void DrawCheckpointTokenizer(AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("tokenizer"));
  if (c.attentions) {
    const char* none = tr("none: the attentions file brings its own tokens");
    SameLineIfFits(ImGui::CalcTextSize(none).x);
    WrappedText(none);
    return;
  }
  if (!c.model) {  // opening, or failed to open
    ImGui::SameLine();
    ImGui::TextDisabled("%s", tr("the checkpoint's own (once it is open)"));
    return;
  }
  std::string name = CheckpointTokenizerName(c);
  if (c.tokenizer && state.scene.input.text.rfind("ids:", 0) == 0) name += tr(" · the input is ids");
  SameLineIfFits(ImGui::CalcTextSize(name.c_str()).x);  // else on a line of its own, under the label
  WrappedText(name);
  RecordLastItem(state, "input.checkpoint_tokenizer");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", (c.tokenizer ? c.tokenizer->description()
                                         : std::string(tr("This model takes token ids, e.g. ids: 3 17 5"))).c_str());
  if (!c.tokenizer && !c.tokenizer_error.empty()) HintText(std::string(tr("The folder's tokenizer cannot be used: ")) + c.tokenizer_error);
}

// A real model's tokenizer for the sentence (a tokenizer.json, a vocab.json with merges.txt beside it,
// or a model folder), or SPEC's words and ideographs. The path applies with Load; a file that cannot be
// read shows the engine's message under the Input window (Panel::input), like any other input error.
void DrawTokenizerChoice(AppState& state) {
  if (state.checkpoint.current() && ViewDrawsModel(state)) {
    DrawCheckpointTokenizer(state);
    return;
  }
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
  if ((ImGui::Button(tr("Load##tokenizer")) || enter) && user_path_text(ui.tokenizer_path) != in.tokenizer_path)
    apply(user_path_text(ui.tokenizer_path));  // ~ expanded, absolute: the field shows what is read
  ImGui::SameLine();
  ImGui::BeginDisabled(in.tokenizer_path.empty());
  if (ImGui::Button(tr("Words##tokenizer"))) apply("");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Back to splitting into words and ideographs (no model)"));
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
    in.tensor_path = state.input.tensor_path = user_path_text(state.input.tensor_path);
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
  if (SliderIntTyped(tr("rows"), &rows, 2, limits::max_grid_side)) {
    grid.rows = std::clamp(rows, 2, limits::max_grid_side);
    edited = true;
  }
  SameLineIfFits(ImGui::GetFontSize() * 8 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(tr("cols")).x);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (SliderIntTyped(tr("cols"), &cols, 2, limits::max_grid_side)) {
    grid.cols = std::clamp(cols, 2, limits::max_grid_side);
    edited = true;
  }
  if (state.input.image_path.empty()) state.input.image_path = grid.image_path;
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4, 60.0f));
  const bool enter = ImGui::InputTextWithHint("##image", tr("or an image: PNG / JPEG path"), &state.input.image_path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button(tr("Load##image")) || enter) {
    grid.image_path = state.input.image_path = user_path_text(state.input.image_path);
    edited = true;
  }
  if (edited) NoteEdit(state, Panel::input);
}

// One token chip: its index as a small grey subscript, then the token's text, then its vocabulary id
// as a grey "#id" when a model's tokenizer gave one (a token whose text is its id — a model without a
// tokenizer — shows "#id" alone): "₀the #262", never "0 262" with nothing to tell them apart.
// Returns true when clicked.
bool TokenChip(int index, const std::string& text, int32_t id, bool selected, float right) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize(), small = std::round(font * 0.72f);
  const std::string index_text = std::to_string(index);
  char id_text[16] = "";
  if (id != kNoTokenId) std::snprintf(id_text, sizeof id_text, "#%d", int(id));
  const bool text_is_id = id != kNoTokenId && text == std::to_string(id);
  const std::string main = text_is_id ? "" : text;
  ImFont* f = ImGui::GetFont();
  const float index_w = f->CalcTextSizeA(small, FLT_MAX, 0.0f, index_text.c_str()).x;
  const float gap = font * 0.2f;
  const float main_w = main.empty() ? 0.0f : ImGui::CalcTextSize(main.c_str()).x;
  const float id_w = id_text[0] ? ImGui::CalcTextSize(id_text).x : 0.0f;
  const float space = ImGui::CalcTextSize(" ").x;
  const float w = style.FramePadding.x * 2 + index_w + gap + main_w + (main_w > 0 && id_w > 0 ? space : 0.0f) + id_w;
  const float h = font + style.FramePadding.y * 0.5f * 2;
  if (index > 0) {
    ImGui::SameLine();
    if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
  }
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton("##chip", ImVec2(w, h));
  const bool hovered = ImGui::IsItemHovered(), held = ImGui::IsItemActive();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 bg = ImGui::GetColorU32(selected ? ImGuiCol_HeaderActive
                                      : held   ? ImGuiCol_ButtonActive
                                      : hovered ? ImGuiCol_ButtonHovered
                                                : ImGuiCol_Button);
  draw->AddRectFilled(p, ImVec2(p.x + w, p.y + h), bg, style.FrameRounding);
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), grey = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  float x = p.x + style.FramePadding.x;
  const float top = p.y + (h - font) * 0.5f;
  draw->AddText(f, small, ImVec2(x, top + font - small * 0.95f), selected ? ink : grey, index_text.c_str());  // subscript
  x += index_w + gap;
  if (!main.empty()) {
    draw->AddText(ImVec2(x, top), ink, main.c_str());
    x += main_w + (id_w > 0 ? space : 0.0f);
  }
  if (id_text[0]) draw->AddText(ImVec2(x, top), selected || main.empty() ? ink : grey, id_text);  // grey beside a text
  return clicked;
}

// The tokens as chips that wrap; clicking one selects it as the query everywhere.
void DrawTokenList(AppState& state) {
  // Only the current model's tokens: a checkpoint's once its pass is there.
  if (const LongHeads* l = CurrentLongHeads(state); l && ViewDrawsModel(state)) {  // a long input: no chips for thousands
    ImGui::TextUnformatted(trcount(l->tokens, TrKey("1 token"), TrKey("%d tokens")).c_str());
    return;
  }
  if (state.checkpoint.current() && ViewDrawsModel(state) && !AnalysisOfCurrentModel(state)) {
    if (CurrentCheckpointError(state).empty() && state.checkpoint.loading.empty()) SpinnerText(tr("running the model…"));
    return;
  }
  if (!state.analysis || !state.analysis->attention) return;
  const AttentionAnalysis& att = *state.analysis->attention;
  ImGui::TextUnformatted(trcount(int(att.labels.size()), TrKey("1 token"), TrKey("%d tokens")).c_str());
  const char* hint = tr("click one to select it as the query");
  SameLineIfFits(ImGui::CalcTextSize(hint).x);  // below the count in a narrow column (a large UI scale)
  ImGui::TextDisabled("%s", hint);
  ImGui::BeginChild("tokens", ImVec2(0, 0), true);
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const int selected = state.scene.view.selected_query;
  // The vocabulary ids: the tokenizer's; for a checkpoint's pass, the pass's own (its tokens may be ids
  // typed without a tokenizer, whose labels are the ids themselves).
  const std::vector<int32_t>* ids = &att.encoding.ids;
  if (const ModelLayerRun* run = state.checkpoint.run.get();
      run && run->stack && run->stack->ids.size() == att.labels.size() && state.analysis.get() != nullptr &&
      &run->analysis == state.analysis.get())
    ids = &run->stack->ids;
  // A drag over the chips (press on one, release on another) makes the tokens between them the token set, on
  // the axis a Ctrl+click would choose; the chips of the range light up while the button is held. A press and
  // release on the same chip stays a click.
  const TokenSet& set = state.scene.view.token_set;
  const TokenSetAxis drag_axis = set.axis == TokenSetAxis::keys ? TokenSetAxis::keys : TokenSetAxis::queries;
  InputWindowState& in = state.input;
  const bool dragging = in.drag_from >= 0 && ImGui::IsMouseDown(ImGuiMouseButton_Left);
  const int drag_lo = std::min(in.drag_from, in.drag_to), drag_hi = std::max(in.drag_from, in.drag_to);
  const bool drag_range = dragging && in.drag_from != in.drag_to;
  for (int i = 0; i < int(att.labels.size()); ++i) {
    const bool is_selected = i == selected;
    const int32_t id = size_t(i) < ids->size() ? (*ids)[size_t(i)] : kNoTokenId;
    ImGui::PushID(i);
    // A chip of a token set (token_sets.h) looks selected too (while a drag is under way: the dragged range
    // instead); Ctrl+click adds a chip to the set (queries unless the set is of keys) or takes it out.
    const bool in_set = drag_range ? i >= drag_lo && i <= drag_hi
                                   : set.active() && std::binary_search(set.tokens.begin(), set.tokens.end(), i);
    const bool clicked = TokenChip(i, state.fonts->display_label(att.labels[size_t(i)]), id,
                                   (!drag_range && is_selected) || in_set, right);
    RecordLastItem(state, "input.token." + std::to_string(i));
    if (ImGui::IsItemActivated()) in.drag_from = in.drag_to = i;
    if (in.drag_from >= 0 && ImGui::IsMouseHoveringRect(ImGui::GetItemRectMin(), ImGui::GetItemRectMax())) in.drag_to = i;
    if (clicked && !(in.drag_from >= 0 && in.drag_from != in.drag_to)) {
      if (ImGui::GetIO().KeyCtrl) ToggleTokenInSet(state, drag_axis, i);
      else SelectQuery(state, is_selected ? -1 : i);
    }
    if (ImGui::IsItemHovered() && in.drag_from < 0) {
      const std::string detail = TokenDetail(att, i);
      ImGui::SetTooltip("%s", (trf("token %d", i) + (detail.empty() ? "" : " · " + detail) + "\n" +
                               tr("Ctrl+click: add to the token set (again: take it out)") + "\n" +
                               tr("drag over tokens: make them the token set")).c_str());
    }
    ImGui::PopID();
  }
  if (in.drag_from >= 0 && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) {  // released
    if (in.drag_from != in.drag_to && in.drag_to >= 0) SetTokenRange(state, drag_axis, in.drag_from, in.drag_to);
    in.drag_from = in.drag_to = -1;
  }
  if (in.drag_from >= int(att.labels.size()) || in.drag_to >= int(att.labels.size())) in.drag_from = in.drag_to = -1;
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
  // A checkpoint reads a sentence (or ids) only: no tensor or grid to choose while its views are shown.
  const bool checkpoint = state.checkpoint.current() && ViewDrawsModel(state);
  for (const auto& [source, name] : sources) {
    if (checkpoint) break;
    if (source != InputSource::text) SameLineIfFits(RadioWidth(tr(name)));  // a narrow column: the next line
    if (ImGui::RadioButton(tr(name), in.source == source) && in.source != source) {
      in.source = source;
      SelectQuery(state, -1);
      NoteEdit(state, Panel::input);
    }
  }
  if (state.checkpoint.attentions && ViewDrawsModel(state))
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
