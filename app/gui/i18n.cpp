#include "gui/i18n.h"

#include <algorithm>
#include <cfloat>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include <imgui.h>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/text/tokenizer.h"
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
    {"Error", "误差"},  // the Convolution window's section: MHSA against the true convolution
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
    // ---- choices, captions, formatted lines and help tooltips of the views
    {"the command line", "命令行"},
    {"Relative position", "相对位置"},
    {"Error: ", "错误："},
    {"could not save the window layout: %s", "无法保存窗口布局：%s"},
    {"last scene: %s", "上次的场景：%s"},
    {"could not restore the last scene (starting afresh): %s", "无法恢复上次的场景（重新开始）：%s"},
    {": only finite numbers are allowed, the value was kept", "：只允许有限的数值，已保留原值"},
    {"computing… %.1f s", "计算中… %.1f 秒"},
    {"computing the head statistics…", "正在计算各头的统计量…"},
    {"◀ %s", "◀ %s"},
    {"%s ▶", "%s ▶"},
    {"Ctrl + / Ctrl − / Ctrl 0: larger / smaller / fitted", "Ctrl + / Ctrl − / Ctrl 0：放大 / 缩小 / 适应窗口"},
    {"Showing the last valid settings: ", "显示的是上一次有效的设置："},
    {"Nothing to show: ", "无可显示："},
    // Input
    {"sentence", "句子"},
    {"tensor X.npy", "张量 X.npy"},
    {"2D grid", "二维网格"},
    {"Sample sentences…", "示例句子…"},
    {"English: the cat", "英文：猫"},
    {"English: it = the animal?", "英文：it 指动物吗？"},
    {"English: pangram", "英文：全字母句"},
    {"Chinese: I like basketball", "中文：我喜欢打篮球"},
    {"Chinese: attention lesson", "中文：注意力课堂"},
    {"Mixed: English + Chinese", "混合：英文 + 中文"},
    {"Longer: a paragraph", "较长：一段话"},
    {"X.npy, float32 [T, C]", "X.npy，float32 [T, C]"},
    {"Rows are tokens, columns the model width C.", "行是词元，列是模型宽度 C。"},
    {"checkerboard", "棋盘格"},
    {"gradient", "渐变"},
    {"rings", "圆环"},
    {"glyph", "字形"},
    {"noise", "噪声"},
    {"(image)", "（图像）"},
    {"noise seed", "噪声种子"},
    {"or an image: PNG / JPEG path", "或一张图像：PNG / JPEG 路径"},
    {"%d tokens", "%d 个词元"},
    {"click one to select it as the query", "点击一个词元，把它选为查询"},
    // Model
    {"These settings shape attention over a sentence (Heads, Shapes); the grid views use the relative-position heads.",
     "这些设置决定句子上的注意力（注意力头、形状）；网格视图使用相对位置头。"},
    {"single-head: one head of width d_model.\nMHA: every head has its own K and V (G = H).\n"
     "MQA: all heads share one K and V (G = 1).\nGQA: heads in a group share K and V (1 < G < H).",
     "单头：一个宽度为 d_model 的头。\nMHA：每个头都有自己的 K 和 V（G = H）。\n"
     "MQA：所有头共享一组 K 和 V（G = 1）。\nGQA：同一组内的头共享 K 和 V（1 < G < H）。"},
    {"single", "单头"},
    {"d_model C = 64·H = %d", "d_model C = 64·H = %d"},
    {"d_model C = %d (the width of X.npy)", "d_model C = %d（X.npy 的宽度）"},
    {"  (single head)", "  （单头）"},
    {"d_k = C/H = %d · 1 head per K/V group", "d_k = C/H = %d · 每个 K/V 组 1 个头"},
    {"d_k = C/H = %d · %d heads per K/V group", "d_k = C/H = %d · 每个 K/V 组 %d 个头"},
    {"KV cache %lld B/token (MHA %lld B)", "KV 缓存 %lld 字节/词元（MHA 为 %lld 字节）"},
    {"KV cache %lld B/token (fp32)", "KV 缓存 %lld 字节/词元（fp32）"},
    {"A query may only look at itself and earlier tokens: key j > query i gets −∞ before the softmax, so its "
     "probability is exactly 0.",
     "查询只能看自己和之前的词元：键 j > 查询 i 时，在 softmax 之前得分设为 −∞，所以它的概率恰好为 0。"},
    {"seed", "种子"},
    {"converted: one MHA weight set per seed, with the K and V heads of each group mean-pooled (Ainslie et al. "
     "2023) — so MHA, GQA and MQA differ only in the sharing.\nindependent: random weights drawn at the grouped "
     "shape.\nloaded: wq.npy wk.npy wv.npy wo.npy from a folder (PyTorch nn.Linear layout).\ndesigned: one textbook "
     "pattern per head, built from the sample embeddings.",
     "转换：每个种子一套 MHA 权重，每组的 K、V 头取平均合并（Ainslie 等，2023）——因此 MHA、GQA 和 MQA 只在共享方式上不同。\n"
     "独立：按分组后的形状随机生成权重。\n加载：从文件夹读取 wq.npy wk.npy wv.npy wo.npy（PyTorch nn.Linear 布局）。\n"
     "人工设计：每个头一种教科书式模式，由示例嵌入构造。"},
    {"converted (MHA base)", "转换（基于 MHA）"},
    {"independent", "独立随机"},
    {"loaded (folder)", "加载（文件夹）"},
    {"designed patterns", "人工设计的模式"},
    // Heads
    {"query %d · %s", "查询 %d · %s"},
    {"head %d · kv group %d", "头 %d · KV 组 %d"},
    {"Head %d · kv group %d", "头 %d · KV 组 %d"},
    {"query %d: %s", "查询 %d：%s"},
    {"key %d: %s", "键 %d：%s"},
    {"score: %s%s", "分数：%s%s"},
    {" (masked)", "（已掩码）"},
    {"masked", "已掩码"},
    {"probability: %s", "概率：%s"},
    {"click: select this query · double-click: open large", "单击：选为查询 · 双击：放大查看"},
    {"score", "分数"},
    {"probability", "概率"},
    {"These are the last valid settings' heads: the engine refused the new ones (see the %s window).",
     "这些是上一次有效设置的头：引擎拒绝了新的设置（见“%s”窗口）。"},
    // Shapes
    {"kind", "类型"},
    {"tokens T", "词元数 T"},
    {"causal", "因果"},
    {"on", "开"},
    {"off", "关"},
    {"%s: new step %s", "%s：新步骤 %s"},
    {"%s: step gone", "%s：步骤已消失"},
    {"parameters: ", "参数："},
    {"KV cache per token (fp32): ", "每个词元的 KV 缓存（fp32）："},
    {"The engine refused the newest settings (see the %s window): ", "引擎拒绝了最新的设置（见“%s”窗口）："},
    {"T = %d tokens · C = %d · H = %d · G = %d · d_k = %d", "T = %d 个词元 · C = %d · H = %d · G = %d · d_k = %d"},
    {"step", "步骤"},
    {"formula", "公式"},
    {"shape", "形状"},
    {"numbers", "数值"},
    {"weight", "权重"},
    {"count", "数量"},
    {"biases", "偏置"},
    {"total", "合计"},
    {"2·G·d_k = 2·%d·%d = %lld numbers", "2·G·d_k = 2·%d·%d = %lld 个数"},
    {"MHA with the same H would need %s (fp32): G/H = %d/%d of it.", "同样 H 的 MHA 需要 %s（fp32）：这里只占其中的 G/H = %d/%d。"},
    {"For these %d tokens: %s (fp32)", "这 %d 个词元：%s（fp32）"},
    // the engine's shape-trace steps (attnscope::Trace) and the formulas that contain words
    {"input", "输入"},
    {"project Q", "投影 Q"},
    {"project K", "投影 K"},
    {"project V", "投影 V"},
    {"split heads", "拆分成头"},
    {"heads first", "头维度移到最前"},
    {"split kv heads", "拆分 KV 头"},
    {"share kv", "共享 KV"},
    {"softmax", "softmax"},  // (scores, causal mask: above)
    {"weighted sum", "加权求和"},
    {"concat heads", "拼接各头"},
    {"output", "输出"},
    {"head h reads K, V of group g(h) = ⌊h / (H/G)⌋", "头 h 读取组 g(h) = ⌊h / (H/G)⌋ 的 K、V"},
    {"S[i, j] = −∞ for j > i", "当 j > i 时 S[i, j] = −∞"},
    {"P = softmax(S) over keys", "P = 沿键方向的 softmax(S)"},
    // Relative position
    {"Relative position 1D · sentence", "一维相对位置 · 句子"},
    {"Relative position 2D · grid", "二维相对位置 · 网格"},
    {"(per head)", "（每个头单独）"},
    {"Δ seed", "Δ 种子"},
    {"α is each head's sharpness: 0 spreads attention evenly, large α puts it all on the one key at query + Δ. "
     "The global α sets every head; the α below sets one head.",
     "α 是每个头的锐度：0 时注意力均匀分布，α 很大时注意力全部落在查询 + Δ 处的那个键上。全局 α 设置所有头；下面的 α 只设置一个头。"},
    {"Adds zero-valued cells beyond the edges as keys, so a head whose window falls off the input puts its mass "
     "there (like a zero-padded convolution) instead of on the nearest real keys.",
     "在边缘之外添加值为零的单元作为键，这样窗口超出输入的头会把注意力放在那里（就像零填充的卷积），而不是放在最近的真实键上。"},
    {"head %d: α = %s, Δ = (%s, %s)", "头 %d：α = %s，Δ = (%s, %s)"},
    {"query (%d, %d) → key (%d, %d)", "查询 (%d, %d) → 键 (%d, %d)"},
    {"head %d: α = %s, Δ = %s", "头 %d：α = %s，Δ = %s"},
    {"query %d %s → key %d %s", "查询 %d %s → 键 %d %s"},
    {"score = v_h·r_δ = %s", "分数 = v_h·r_δ = %s"},
    {"(mixed mode adds the content score; λ = %s)", "（混合模式会加上内容分数；λ = %s）"},
    {"probability = %s", "概率 = %s"},
    {"drag: Δ of head %d (row down, column right)", "拖动：头 %d 的 Δ（行向下，列向右）"},
    {"head %d · Δ (%s, %s) · α %s", "头 %d · Δ (%s, %s) · α %s"},
    {"head %d · Δ %s · α %s", "头 %d · Δ %s · α %s"},
    {"Each head's scores become the model's content scores (Q·Kᵀ/√d_k of the same head) plus λ times the "
     "positional scores, so H here follows the Model window's heads.",
     "每个头的分数变为模型的内容分数（同一个头的 Q·Kᵀ/√d_k）加上 λ 倍的位置分数，所以这里的 H 跟随模型窗口的头数。"},
    {"rows: queries · columns: keys · click a row to make it the query", "行：查询 · 列：键 · 点击一行把它设为查询"},
    {"%s · query (%d, %d): click the grid to move it", "%s · 查询 (%d, %d)：点击网格可移动它"},
    {"the grid", "网格"},
    {"all heads (mean)", "所有头（平均）"},
    {"mean probability", "平均概率"},
    {"cell (%d, %d) — click: make it the query", "单元 (%d, %d) — 单击：设为查询"},
    {"click: edit this head", "单击：编辑这个头"},
    // Convolution
    {"Every head's sharpness. As α grows each head looks at exactly one neighbour and the MHSA output becomes the "
     "convolution; the gap shrinks like exp(−α).",
     "每个头的锐度。α 越大，每个头越是只看一个邻居，MHSA 的输出就变成卷积；差距按 exp(−α) 缩小。"},
    {"Without padding keys a border cell's heads cannot look outside the grid, so the border cannot match a "
     "zero-padded convolution; with them it can.",
     "没有填充键时，边界单元的头无法看到网格之外，所以边界无法与零填充卷积一致；有了填充键就可以。"},
    {"weights W_h = kernel[Δ_h]", "权重 W_h = 卷积核[Δ_h]"},
    {"kernel weights must be finite numbers; the value was kept", "卷积核权重必须是有限数值；已保留原值"},
    {"max |MHSA − conv| against α (log–log)", "最大 |MHSA − 卷积| 随 α 的变化（双对数）"},
    {"interior", "内部"},
    {"border", "边界"},
    {"%d×%d kernel → %d heads", "%d×%d 卷积核 → %d 个头"},
    {"interior: %s", "内部：%s"},
    {"(%d cells)", "（%d 个单元）"},
    {"border:   %s", "边界：%s"},
    {"largest |MHSA − conv| over each set", "每组单元上最大的 |MHSA − 卷积|"},
    {"input X", "输入 X"},
    {"convolution", "卷积"},
    {"conv", "卷积"},
    {"value", "数值"},
    {"difference", "差值"},
    {"cell (%d, %d)\ninput: %s\nMHSA: %s\nconv: %s\ndifference: %s", "单元 (%d, %d)\n输入：%s\nMHSA：%s\n卷积：%s\n差值：%s"},
    // Export
    {"the current view", "当前视图"},
    {"one head", "一个头"},
    {"all heads", "所有头"},
    {"nothing to export yet: the engine has no result for these settings", "还没有可导出的内容：引擎还没有这些设置的结果"},
    {"wrote ", "已写入 "},
    {"not exported: ", "未导出："},
    {"exports/attnscope-<what>-<time>.<format>  (leave empty for a fresh name)", "exports/attnscope-<内容>-<时间>.<格式>（留空则自动命名）"},
    {"Exporting…", "导出中…"},
    {"%s pattern, %s cells", "%s图案，%s 个单元"},
    {"noise pattern (seed %s), %s cells", "噪声图案（种子 %s），%s 个单元"},
    {"α = %s\ninterior: %s\nborder: %s", "α = %s\n内部：%s\n边界：%s"},
    {"MHSA − conv", "MHSA − 卷积"},
    {" (not allowed)", "（不允许）"},
    {"Δ col", "Δ 列"},
    {"Δ col →", "Δ 列 →"},
    {"← Δ row", "← Δ 行"},
    {"Ctrl+S exports again with these settings", "Ctrl+S 用这些设置再次导出"},
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
  // The designed patterns' labels (head captions, analysis table) and descriptions (tooltips).
  for (DesignedPattern p : all_designed_patterns()) {
    fonts.request_text(designed_pattern_label(p).zh);
    fonts.request_text(designed_pattern_description(p).zh);
  }
}

std::vector<std::pair<std::string, std::string>> UiStringTable() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Entry& e : table) out.emplace_back(e.en, e.zh);
  return out;
}

}  // namespace attnscope::gui
