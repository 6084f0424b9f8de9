#include "gui/i18n.h"

#include <algorithm>
#include <cfloat>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include <imgui.h>

#include "attnscope/text_raster.h"
#include "attnscope/tokenizer.h"
#include "gui/fonts.h"

namespace attnscope::gui {
namespace {

struct Entry {
  const char* en;
  const char* zh;
};

// The window's strings. Keys are the exact English text passed to tr()/trf()/WindowTitle(); format
// strings keep their conversions in the same order in both languages.
constexpr Entry table[] = {
    // ---- menu bar
    {"File", "文件"},
    {"Open scene…", "打开场景…"},
    {"Save scene…", "保存场景…"},
    {"Windows", "窗口"},
    {"Display", "显示"},
    {"Classroom", "课堂"},
    {"Lessons", "课程"},
    {"Head analysis", "注意力头分析"},
    {"KV-cache calculator", "KV 缓存计算器"},
    {"Language", "语言"},
    {"Input", "输入"},
    {"Model", "模型"},
    {"Shapes beside the view", "在视图旁显示形状"},
    {"Export…", "导出…"},
    {"Export again", "再次导出"},
    {"Reset layout", "重置布局"},
    {"UI scale", "界面缩放"},
    {"Light theme (projectors)", "浅色主题（投影仪）"},
    {"Dark theme", "深色主题"},
    {"Heads", "注意力头"},
    {"Shapes", "形状"},
    {"Rel. position 1D", "相对位置 1D"},
    {"Rel. position 2D", "相对位置 2D"},
    {"Convolution", "卷积"},
    {"result in %.0f ms", "结果用时 %.0f 毫秒"},
    {"computing…", "计算中…"},
    // ---- the other windows (labels, titles, buttons)
    {"Attention", "注意力"},
    {"Convolution as attention", "用注意力实现卷积"},
    {"Convolution works on a 2D grid; the input is a sentence or a tensor.", "卷积需要二维网格；当前输入是句子或张量。"},
    {"Designed heads have d_k = 64 each: they read positions and token features from a designed embedding.", "人工设计的头每个 d_k = 64：它们从设计好的嵌入中读取位置和词元特征。"},
    {"Error", "错误"},
    {"Expansion", "展开"},
    {"Export", "导出"},
    {"K/V weights", "K/V 权重"},
    {"KV cache per token, per layer", "每个词元、每层的 KV 缓存"},
    {"Load", "加载"},
    {"Load##image", "加载##image"},
    {"Load##tensor", "加载##tensor"},
    {"More than 1024 tokens: only the query's row is kept; each head shows one row.", "超过 1024 个词元：只保留查询所在的一行；每个头显示一行。"},
    {"One head", "单个头"},
    {"Parameters", "参数"},
    {"Shape trace", "形状追踪"},
    {"The Heads view shows attention over a sentence or a tensor; the input is a 2D grid.", "注意力头视图显示句子或张量上的注意力；当前输入是二维网格。"},
    {"The current input has no attention heads (a grid): export the current view instead.", "当前输入（网格）没有注意力头：请导出当前视图。"},
    {"The shape trace follows grouped attention over a sentence or a tensor; the input is a 2D grid.", "形状追踪跟随句子或张量上的分组注意力；当前输入是二维网格。"},
    {"This view works on a 2D grid; the input is a sentence or a tensor.", "这个视图需要二维网格；当前输入是句子或张量。"},
    {"This view works on a sentence; the input is a 2D grid.", "这个视图需要句子；当前输入是二维网格。"},
    {"Turn it off to see the softmax saturate: without the scaling, larger d_k gives sharper rows.", "关掉它可以看到 softmax 饱和：不缩放时，d_k 越大，每行越尖锐。"},
    {"Use a grid", "改用网格"},
    {"Use the sentence", "改用句子"},
    {"What changed", "变化了什么"},
    {"caption", "标题"},
    {"causal mask", "因果掩码"},
    {"colormap", "色图"},
    {"cols", "列"},
    {"d_model C", "d_model C"},
    {"divide scores by √d_k", "分数除以 √d_k"},
    {"format", "格式"},
    {"groups G", "组数 G"},
    {"kernel", "卷积核"},
    {"mixed mode: content + λ·position", "混合模式：内容 + λ·位置"},
    {"new seed", "新种子"},
    {"padding keys", "填充键"},
    {"padding keys (zero padding)", "填充键（零填充）"},
    {"path", "路径"},
    {"pattern", "图案"},
    {"per head", "每个头单独"},
    {"probabilities", "概率"},
    {"rows", "行"},
    {"scale", "倍数"},
    {"scores", "分数"},
    {"shared scale", "统一刻度"},
    {"what", "内容"},
    {"Δ preset", "Δ 预设"},
    {"Δ row", "Δ 行"},
    {"α (all)", "α（全部）"},
    // ---- lessons
    {"Choose a lesson…", "选择一节课…"},
    {"Lesson %d of %d", "第 %d 课，共 %d 课"},
    {"Each lesson sets up the views, says what to look at, and changes one thing per step.",
     "每节课都会设置好视图，告诉你该看什么，并且每一步只改变一件事。"},
    {"The lessons could not be read: ", "无法读取课程："},
    {"Previous", "上一步"},
    {"Next", "下一步"},
    {"Step %d of %d", "第 %d 步，共 %d 步"},
    {"KV cache of %s", "%s 的 KV 缓存"},
    {"%lld layers, %lld heads, d_head %lld, %s, %lld tokens, batch %lld",
     "%lld 层，%lld 个头，d_head %lld，%s，%lld 个词元，批大小 %lld"},
    {"Open the calculator", "打开计算器"},
    {"About this lesson", "关于这节课"},
    {"there is no lesson %d (valid: 1 to %d)", "没有第 %d 课（有效范围：1 到 %d）"},
    {"lesson %d has steps 1 to %d, not %d", "第 %d 课只有第 1 到 %d 步，没有第 %d 步"},
    // ---- KV-cache calculator
    {"While generating, a decoder keeps the keys and values of every past token in every layer: "
     "2 × L × G × d_head × bytes × tokens × batch.",
     "生成时，解码器在每一层保存所有已生成词元的键和值：2 × L × G × d_head × 字节数 × 词元数 × 批大小。"},
    {"model", "模型"},
    {"custom", "自定义"},
    {"layers L", "层数 L"},
    {"heads H", "头数 H"},
    {"kv heads G", "KV 头数 G"},
    {"d_head", "d_head"},
    {"tokens", "词元数"},
    {"batch", "批大小"},
    {"memory (GiB)", "显存 (GiB)"},
    {"element", "元素类型"},
    {"(%d bytes)", "（%d 字节）"},
    {"memory", "显存"},
    {"KV cache: MHA, GQA, MQA", "KV 缓存：MHA、GQA、MQA"},
    {"%s (G = %lld): %s", "%s（G = %lld）：%s"},
    {"fits", "放得下"},
    {"does not fit", "放不下"},
    {" · %s attention parameters", " · 注意力参数 %s"},
    {"| = the memory: %s", "| = 显存：%s"},
    {"L = %lld layers, H = %lld heads, G = %lld kv heads, d_head = %lld",
     "L = %lld 层，H = %lld 个头，G = %lld 个 KV 头，d_head = %lld"},
    {"One token of one sequence costs %s with MHA, %s with GQA and %s with MQA.",
     "一个序列的一个词元：MHA 占 %s，GQA 占 %s，MQA 占 %s。"},
    // ---- head analysis
    {"Head analysis needs attention over a sentence or a tensor: choose a text input.",
     "注意力头分析需要句子或张量上的注意力：请选择文本输入。"},
    {"Entropy: how spread a head's attention is (0 = on one token; normalised 1 = uniform). "
     "Distance: how many tokens away it looks on average. First token: the share of attention on token 0.",
     "熵：一个头的注意力有多分散（0 = 全在一个词元上；归一化后 1 = 均匀）。距离：平均看向多远的词元。"
     "首词元：落在第 0 个词元上的注意力比例。"},
    {"head", "头"},
    {"head %d", "头 %d"},
    {"entropy", "熵"},
    {"normalised", "归一化"},
    {"distance", "距离"},
    {"first token", "首词元"},
    {"drift", "偏移"},
    {"How alike are the heads? (Jensen–Shannon divergence)", "各个头有多相似？（Jensen–Shannon 散度）"},
    {"0 = the two heads attend identically; ln 2 ≈ 0.69 = they never look at the same tokens.",
     "0 = 两个头的注意力完全相同；ln 2 ≈ 0.69 = 它们从不看同一个词元。"},
    {"One head: nothing to compare.", "只有一个头：没有可比较的。"},
    {"heads %d and %d: JS = %.3f nats", "头 %d 与头 %d：JS = %.3f 奈特"},
    {"(averaged over %d evenly spaced query rows)", "（在 %d 个均匀间隔的查询行上取平均）"},
    {"Drift from the MHA original", "相对原始 MHA 的偏移"},
    {"Each head's map now against the same query head before its keys and values were pooled into shared "
     "groups. 0 means sharing K/V did not change where the head looks; the larger the number, the more the "
     "head had to give up its own pattern.",
     "把每个头现在的注意力图与同一个查询头在键和值被合并成共享组之前的图相比。0 表示共享 K/V 没有改变这个头看向哪里；"
     "数值越大，这个头越多地放弃了自己原来的模式。"},
    {"Head %d moved most (%.3f nats).", "头 %d 变化最大（%.3f 奈特）。"},
    // ---- scene files
    {"Save scene", "保存场景"},
    {"Open scene", "打开场景"},
    {"File (a path; relative to the folder attnscope was started in)", "文件（路径；相对于启动 attnscope 的文件夹）"},
    {"Save", "保存"},
    {"Open", "打开"},
    {"Cancel", "取消"},
    {"type a file name, e.g. scene.json", "请输入文件名，例如 scene.json"},
    {"scene saved to %s", "场景已保存到 %s"},
    {"could not save the scene: %s", "无法保存场景：%s"},
    {"scene read from %s", "已从 %s 读取场景"},
    {"%d keys ignored: %s", "忽略了 %d 个键：%s"},
    {"could not open the scene: %s", "无法打开场景：%s"},
};

Language current_language = Language::en;

const std::unordered_map<std::string_view, const char*>& Lookup() {
  static const std::unordered_map<std::string_view, const char*> map = [] {
    std::unordered_map<std::string_view, const char*> m;
    for (const Entry& e : table) m.emplace(e.en, e.zh);
    return m;
  }();
  return map;
}

}  // namespace

void SetUiLanguage(Language language) { current_language = language; }
Language UiLanguage() { return current_language; }

const char* tr(const char* english) {
  if (current_language == Language::en) return english;
  const auto& map = Lookup();
  const auto it = map.find(english);
  return it == map.end() ? english : it->second;
}

std::string WindowTitle(const char* english, const char* id) { return std::string(tr(english)) + "###" + id; }

std::string trf(const char* english_format, ...) {
  const char* format = tr(english_format);
  va_list args;
  va_start(args, english_format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out;
  if (n > 0) {
    out.resize(size_t(n) + 1);
    std::vsnprintf(out.data(), out.size(), format, args);
    out.resize(size_t(n));
  }
  va_end(args);
  return out;
}

namespace {

bool IsCjk(char32_t cp) { return cp >= 0x2E80; }
// Punctuation that must stay at the end of the line before it.
bool NoLineStart(char32_t cp) {
  static const std::u32string closing = U"，。、；：？！）」』”’》〉】…,.;:?!)";
  return closing.find(cp) != std::u32string::npos;
}

}  // namespace

void WrappedText(const std::string& text) {
  const float width = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4);
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  // Code points with their byte offsets.
  const std::u32string cps = decode_utf8_lenient(text);
  std::vector<size_t> offset;
  offset.reserve(cps.size() + 1);
  size_t at = 0;
  for (char32_t cp : cps) {
    offset.push_back(at);
    at += encode_utf8(cp).size();
  }
  offset.push_back(at);
  const std::string utf8 = [&] {
    std::string s;
    for (char32_t cp : cps) s += encode_utf8(cp);
    return s;
  }();
  auto measure = [&](size_t a, size_t b) {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, utf8.data() + offset[a], utf8.data() + offset[b]).x;
  };
  size_t start = 0;
  while (start < cps.size()) {
    size_t end = start, last_break = 0;  // last_break: a break before this index is allowed (0: none yet)
    bool newline = false;
    while (end < cps.size()) {
      const char32_t cp = cps[end];
      if (cp == U'\n') {
        newline = true;
        break;
      }
      if (end > start) {
        const char32_t prev = cps[end - 1];
        if (prev == U' ' || ((IsCjk(cp) || IsCjk(prev)) && cp != U' ' && !NoLineStart(cp))) last_break = end;
      }
      if (measure(start, end + 1) > width && end > start) break;
      ++end;
    }
    size_t cut = end;
    if (!newline && end < cps.size() && last_break > start) cut = last_break;
    size_t shown_end = cut;
    while (shown_end > start && cps[shown_end - 1] == U' ') --shown_end;
    ImGui::TextUnformatted(utf8.data() + offset[start], utf8.data() + offset[shown_end]);
    start = cut;
    if (newline) ++start;
    while (start < cps.size() && cps[start] == U' ') ++start;
  }
}

void RequestUiGlyphs(FontAtlas& fonts) {
  for (const Entry& e : table) fonts.request_text(e.zh);
}

std::vector<std::pair<std::string, std::string>> UiStringTable() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Entry& e : table) out.emplace_back(e.en, e.zh);
  return out;
}

}  // namespace attnscope::gui
